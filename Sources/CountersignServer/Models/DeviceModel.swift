import Fluent
import Foundation

/// A phone bound to a user by its device key, and how to reach it.
final class DeviceModel: Model, @unchecked Sendable {
    static let schema = "devices"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Parent(key: "user_id") var user: UserModel
    /// Base64 SPKI DER of the P-256 device key.
    @Field(key: "public_key") var publicKey: String
    @Field(key: "name") var name: String
    @Field(key: "model") var model: String
    @Field(key: "os") var os: String
    @Field(key: "push_channel") var pushChannel: String
    @OptionalField(key: "push_token") var pushToken: String?
    @OptionalField(key: "push_app_id") var pushAppID: String?
    /// Set when the push provider said the token is no longer valid; the device stays registered.
    @OptionalField(key: "push_token_invalid_at") var pushTokenInvalidAt: Date?
    @OptionalField(key: "push_token_invalid_reason") var pushTokenInvalidReason: String?
    @Field(key: "status") var status: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    @OptionalField(key: "revoked_at") var revokedAt: Date?

    init() {}

    init(
        id: String, userID: String, publicKey: String, name: String, model: String, os: String,
        pushChannel: String, pushToken: String?, pushAppID: String?
    ) {
        self.id = id
        self.$user.id = userID
        self.publicKey = publicKey
        self.name = name
        self.model = model
        self.os = os
        self.pushChannel = pushChannel
        self.pushToken = pushToken
        self.pushAppID = pushAppID
        self.status = CredentialStatus.active.rawValue
    }
}
