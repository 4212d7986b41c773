/// Provider configurations keyed by the app id devices register with (an APNs bundle id, a Firebase
/// project id).
struct AppConfigurations<Configuration: Sendable>: Sendable {
    private let byAppID: [String: Configuration]
    /// Apps whose configuration exists but could not be used: no other configuration serves them.
    private let withheld: Set<String>

    init(_ configurations: [Configuration], withholding withheld: Set<String> = [], appID: (Configuration) -> String) {
        byAppID = Dictionary(configurations.map { (appID($0), $0) }, uniquingKeysWith: { first, _ in first })
        self.withheld = withheld
    }

    /// The configuration for a device's app id; with one configuration (and none withheld), it serves
    /// every device. A withheld app gets none, rather than another app's key and topic.
    func serving(_ appID: String?) -> Configuration? {
        if let appID, withheld.contains(appID) { return nil }
        return appID.flatMap { byAppID[$0] } ?? (byAppID.count == 1 && withheld.isEmpty ? byAppID.values.first : nil)
    }
}
