import Foundation

/// A token signing key (ES256). The newest unretired key signs; retired keys stay published in the
/// JWKS until every token they signed has expired.
struct SigningKeyRecord: Codable, Sendable {
    /// The JWT `kid`.
    let id: String
    /// The PEM of the private key; in the database sealed with the master key (`SigningKeyVault`).
    let privateKeyPEM: String
    let createdAt: Date
    let retiredAt: Date?

    func withPrivateKey(_ privateKeyPEM: String) -> SigningKeyRecord {
        SigningKeyRecord(id: id, privateKeyPEM: privateKeyPEM, createdAt: createdAt, retiredAt: retiredAt)
    }

    enum CodingKeys: String, CodingKey {
        case id
        case privateKeyPEM = "private_key_pem"
        case createdAt = "created_at"
        case retiredAt = "retired_at"
    }
}
