import Fluent
import Foundation

/// A token signing key (ES256). The newest unretired key signs; retired keys stay published in the
/// JWKS until every token they signed has expired.
final class SigningKeyModel: Model, @unchecked Sendable {
    static let schema = "signing_keys"

    /// The JWT `kid`.
    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "private_key_pem") var privateKeyPEM: String
    @Field(key: "created_at") var createdAt: Date
    @OptionalField(key: "retired_at") var retiredAt: Date?

    init() {}

    init(id: String, privateKeyPEM: String, createdAt: Date) {
        self.id = id
        self.privateKeyPEM = privateKeyPEM
        self.createdAt = createdAt
    }
}

/// The admin API key, stored only as a SHA-256 hash.
final class AdminCredentialModel: Model, @unchecked Sendable {
    static let schema = "admin_credentials"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "key_hash") var keyHash: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(id: String, keyHash: String) {
        self.id = id
        self.keyHash = keyHash
    }
}
