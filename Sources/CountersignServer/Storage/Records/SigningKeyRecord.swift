import Foundation

/// A token signing key (ES256). The newest unretired key signs; retired keys stay published in the
/// JWKS until every token they signed has expired.
struct SigningKeyRecord: Sendable {
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
}

extension SigningKeyRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        privateKeyPEM = try row["private_key_pem"]
        createdAt = try row["created_at"]
        activatesAt = try row["activates_at"]
        retiredAt = try row["retired_at"]
    }
}
