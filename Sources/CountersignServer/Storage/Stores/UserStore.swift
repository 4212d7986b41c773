import FluentSQL
import Foundation

/// Every statement on `users`.
struct UserStore {
    static let table = "users"
    let sql: any SQLDatabase

    func find(_ id: String) async throws -> UserRecord? {
        try await sql.raw("SELECT * FROM \(ident: Self.table) WHERE id = \(bind: id)").first(decoding: UserRecord.self)
    }

    /// The user an application knows as `externalUserID`.
    func find(externalUserID: String) async throws -> UserRecord? {
        try await sql.raw("SELECT * FROM \(ident: Self.table) WHERE external_user_id = \(bind: externalUserID)").first(decoding: UserRecord.self)
    }

    func insert(_ user: UserRecord) async throws {
        try await sql.insert(into: Self.table).model(user).run()
    }

    /// The newest `limit` users.
    func newest(limit: Int) async throws -> [UserRecord] {
        try await sql.raw("SELECT * FROM \(ident: Self.table) ORDER BY created_at DESC LIMIT \(bind: limit)").all(decoding: UserRecord.self)
    }
}
