import Fluent
import FluentSQL
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

extension DeviceModel {
    /// The device `id`, read with plain SQL: signed requests and new approvals read one on every call.
    static func load(_ id: String, on sql: any SQLDatabase) async throws -> DeviceModel? {
        try await sql.raw("SELECT * FROM \(ident: schema) WHERE id = \(bind: id)").first(decoding: Row.self).map(DeviceModel.init(row:))
    }

    /// The user's active devices, newest first.
    static func active(ofUser userID: String, on sql: any SQLDatabase) async throws -> [DeviceModel] {
        try await sql.raw("""
            SELECT * FROM \(ident: schema) WHERE user_id = \(bind: userID) AND status = \(bind: CredentialStatus.active.rawValue)
            ORDER BY created_at DESC
            """).all(decoding: Row.self).map(DeviceModel.init(row:))
    }

    private convenience init(row: Row) {
        self.init(
            id: row.id, userID: row.user_id, publicKey: row.public_key, name: row.name, model: row.model, os: row.os,
            pushChannel: row.push_channel, pushToken: row.push_token, pushAppID: row.push_app_id)
        pushTokenInvalidAt = row.push_token_invalid_at
        pushTokenInvalidReason = row.push_token_invalid_reason
        status = row.status
        createdAt = row.created_at
        revokedAt = row.revoked_at
    }

    /// The table's columns as stored.
    private struct Row: Decodable {
        let id: String
        let user_id: String
        let public_key: String
        let name: String
        let model: String
        let os: String
        let push_channel: String
        let push_token: String?
        let push_app_id: String?
        let push_token_invalid_at: Date?
        let push_token_invalid_reason: String?
        let status: String
        let created_at: Date?
        let revoked_at: Date?
    }
}
