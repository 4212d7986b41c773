import Foundation

/// A public key a phone keeps behind biometrics, registered for one user.
struct BiometricKeyRecord: Sendable {
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
}

extension BiometricKeyRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        userID = try row["user_id"]
        publicKeyID = try row["public_key_id"]
        publicKey = try row["public_key"]
        keyFamily = try row["key_family"]
        os = try row["os"]
        deviceID = try row["device_id"]
        status = try row["status"]
        createdAt = try row["created_at"]
        revokedAt = try row["revoked_at"]
    }
}
