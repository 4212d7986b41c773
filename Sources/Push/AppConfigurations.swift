/// Provider configurations keyed by the app id devices register with (an APNs bundle id, a Firebase
/// project id).
struct AppConfigurations<Configuration: Sendable>: Sendable {
    private let byAppID: [String: Configuration]

    init(_ configurations: [Configuration], appID: (Configuration) -> String) {
        byAppID = Dictionary(configurations.map { (appID($0), $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The configuration for a device's app id; with one configuration, it serves every device.
    func serving(_ appID: String?) -> Configuration? {
        appID.flatMap { byAppID[$0] } ?? (byAppID.count == 1 ? byAppID.values.first : nil)
    }
}
