import Fluent
import Foundation

/// A public key a phone keeps behind biometrics, registered for one user.
final class BiometricKeyModel: Model, @unchecked Sendable {
    static let schema = "biometric_keys"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Parent(key: "user_id") var user: UserModel
    /// The id the phone chose for the key (`publicKeyId` on the wire).
    @Field(key: "public_key_id") var publicKeyID: String
    /// Base64 SPKI DER.
    @Field(key: "public_key") var publicKey: String
    /// `ec` or `rsa`.
    @Field(key: "key_family") var keyFamily: String
    @Field(key: "os") var os: String
    /// The device the key lives on, once the same registration bound one.
    @OptionalField(key: "device_id") var deviceID: String?
    @Field(key: "status") var status: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    @OptionalField(key: "revoked_at") var revokedAt: Date?

    init() {}

    init(id: String, userID: String, publicKeyID: String, publicKey: String, keyFamily: String, os: String) {
        self.id = id
        self.$user.id = userID
        self.publicKeyID = publicKeyID
        self.publicKey = publicKey
        self.keyFamily = keyFamily
        self.os = os
        self.status = CredentialStatus.active.rawValue
    }
}
