import Foundation

/// What the simulated phone remembers between commands: which server, which device, which user.
/// Kept as JSON next to the key file, both readable by the owner only.
public struct DeviceProfile: Codable, Sendable {
    public var server: String
    public var clientID: String
    public var deviceID: String
    public var userIdentifier: String

    public init(server: String, clientID: String, deviceID: String, userIdentifier: String) {
        self.server = server
        self.clientID = clientID
        self.deviceID = deviceID
        self.userIdentifier = userIdentifier
    }

    /// The profile directory: `--profile`, else `$COUNTERSIGN_DEVICE_PROFILE`, else `~/.countersign/device`.
    public static func directory(_ option: String?) -> URL {
        if let option { return URL(fileURLWithPath: option) }
        if let environment = ProcessInfo.processInfo.environment["COUNTERSIGN_DEVICE_PROFILE"], !environment.isEmpty {
            return URL(fileURLWithPath: environment)
        }
        return FileManager.default.homeDirectoryForCurrentDirectory.appendingPathComponent(".countersign/device")
    }

    public static func keysFile(in directory: URL) -> URL { directory.appendingPathComponent("keys.json") }
    public static func profileFile(in directory: URL) -> URL { directory.appendingPathComponent("profile.json") }

    public static func load(from directory: URL) throws -> DeviceProfile {
        guard let data = try? Data(contentsOf: profileFile(in: directory)) else {
            throw SimulatedPhoneError.notRegistered(directory.path)
        }
        return try JSONDecoder().decode(DeviceProfile.self, from: data)
    }

    public func save(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = Self.profileFile(in: directory)
        _ = FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600])
        try JSONEncoder().encode(self).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
    }
}

extension FileManager {
    fileprivate var homeDirectoryForCurrentDirectory: URL {
        URL(fileURLWithPath: ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory())
    }
}

/// Why the simulated phone stopped.
public enum SimulatedPhoneError: Error, CustomStringConvertible {
    case notRegistered(String)
    case nothingPending
    /// Several requests wait and none was named: the phone never guesses which one the person means.
    case severalPending([String])
    case otpRequired
    case refused(String)

    public var description: String {
        switch self {
        case .notRegistered(let path): "No simulated phone is registered in \(path). Run: countersign device register --enrollment-uri URI"
        case .nothingPending: "No approval is waiting for this phone."
        case .severalPending(let ids): "Several requests are waiting (\(ids.joined(separator: ", "))): name the one to answer."
        case .otpRequired: "This request asks for the code the browser shows: run again with --otp CODE."
        case .refused(let reason): reason
        }
    }
}
