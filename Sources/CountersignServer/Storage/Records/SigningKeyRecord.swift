import Foundation

/// A token signing key (ES256). The newest unretired key signs; retired keys stay published in the
/// JWKS until every token they signed has expired.
struct SigningKeyRecord: Codable, Sendable {
    /// The JWT `kid`.
    let id: String
    /// The PEM of the private key; in the database sealed with the master key (`SigningKeyVault`).
    let privateKeyPEM: String
    let createdAt: Date
    /// When it starts signing: a key rotated in is published for a while first (`TokenIssuer`).
    let activatesAt: Date
    /// When it stopped, or stops, signing.
    let retiredAt: Date?

    func withPrivateKey(_ privateKeyPEM: String) -> SigningKeyRecord {
        SigningKeyRecord(id: id, privateKeyPEM: privateKeyPEM, createdAt: createdAt, activatesAt: activatesAt, retiredAt: retiredAt)
    }

    /// Whether it is the one that signs at `date`, when no newer key does.
    func signs(at date: Date) -> Bool {
        activatesAt <= date && retiredAt.map { date < $0 } ?? true
    }

    enum CodingKeys: String, CodingKey {
        case id
        case privateKeyPEM = "private_key_pem"
        case createdAt = "created_at"
        case activatesAt = "activates_at"
        case retiredAt = "retired_at"
    }
}
