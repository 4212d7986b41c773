import Foundation

/// A public key a phone keeps behind biometrics, registered for one user.
struct BiometricKeyRecord: Codable, Sendable {
    let id: String
    let userID: String
    /// The id the phone chose for the key (`publicKeyId` on the wire).
    let publicKeyID: String
    /// Base64 SPKI DER.
    let publicKey: String
    /// `ec` or `rsa`.
    let keyFamily: String
    let os: String
    /// The device the key lives on, once the same registration bound one.
    let deviceID: String?
    /// A `CredentialStatus`.
    let status: String
    let createdAt: Date?
    let revokedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, os, status
        case userID = "user_id"
        case publicKeyID = "public_key_id"
        case publicKey = "public_key"
        case keyFamily = "key_family"
        case deviceID = "device_id"
        case createdAt = "created_at"
        case revokedAt = "revoked_at"
    }
}
