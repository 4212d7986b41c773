import Fluent
import Foundation

/// Whether a device or key may still be used.
enum CredentialStatus: String, Codable {
    case active
    case revoked
}

/// A device or biometric key: something the admin API can revoke.
protocol RevocableCredential: Model where IDValue == String {
    /// How error messages name it.
    static var noun: String { get }
    var status: String { get set }
    var revokedAt: Date? { get set }
}

extension DeviceModel: RevocableCredential {
    static let noun = "device"
}

extension BiometricKeyModel: RevocableCredential {
    static let noun = "biometric key"
}
