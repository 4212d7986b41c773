import Foundation

/// Whether a device or biometric key may still be used.
enum CredentialStatus: String, Codable {
    case active
    case revoked
}

extension CredentialStatus: SQLBindable, SQLColumnDecodable {}
