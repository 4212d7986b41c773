import Fluent
import FluentSQL
import Foundation

/// A person known to the server, identified to applications by their external user id.
final class UserModel: Model, @unchecked Sendable {
    static let schema = "users"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "external_user_id") var externalUserID: String
    @OptionalField(key: "email") var email: String?
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(id: String, externalUserID: String, email: String?) {
        self.id = id
        self.externalUserID = externalUserID
        self.email = email
    }
}

extension UserModel {
    /// The user `id`, read with plain SQL (approvals read theirs on every call).
    static func load(_ id: String, on sql: any SQLDatabase) async throws -> UserModel? {
        try await first(matching: "id", id, on: sql)
    }

    /// The user an application knows as `externalUserID`.
    static func load(externalUserID: String, on sql: any SQLDatabase) async throws -> UserModel? {
        try await first(matching: "external_user_id", externalUserID, on: sql)
    }

    private static func first(matching column: String, _ value: String, on sql: any SQLDatabase) async throws -> UserModel? {
        struct Row: Decodable {
            let id: String
            let external_user_id: String
            let email: String?
        }
        return try await sql.raw("""
            SELECT id, external_user_id, email FROM \(ident: schema) WHERE \(ident: column) = \(bind: value)
            """).first(decoding: Row.self).map { UserModel(id: $0.id, externalUserID: $0.external_user_id, email: $0.email) }
    }
}
