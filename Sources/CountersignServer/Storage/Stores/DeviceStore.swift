import FluentSQL
import Foundation

/// Every statement on `devices`.
struct DeviceStore {
    static let table = "devices"
    let sql: any SQLDatabase

    func find(_ id: String) async throws -> DeviceRecord? {
        try await sql.raw("SELECT * FROM \(ident: Self.table) WHERE id = \(bind: id)").first(decoding: DeviceRecord.self)
    }

    /// The user's active devices, newest first.
    func active(ofUser userID: String) async throws -> [DeviceRecord] {
        try await sql.raw("""
            SELECT * FROM \(ident: Self.table) WHERE user_id = \(bind: userID) AND status = \(bind: CredentialStatus.active.rawValue)
            ORDER BY created_at DESC
            """).all(decoding: DeviceRecord.self)
    }

    /// All the user's devices, revoked ones too, oldest first.
    func all(ofUser userID: String) async throws -> [DeviceRecord] {
        try await sql.raw("SELECT * FROM \(ident: Self.table) WHERE user_id = \(bind: userID) ORDER BY created_at")
            .all(decoding: DeviceRecord.self)
    }

    func insert(_ device: DeviceRecord) async throws {
        try await sql.insert(into: Self.table).model(device).run()
    }

    func revoke(_ id: String, at now: Date) async throws {
        try await revokeCredential(id, in: Self.table, at: now, on: sql)
    }

    /// Records that the push provider refused the device's token (the first refusal is kept).
    func markPushTokenInvalid(_ id: String, reason: String, at now: Date) async throws {
        try await sql.raw("""
            UPDATE \(ident: Self.table) SET push_token_invalid_at = \(bind: now), push_token_invalid_reason = \(bind: reason)
            WHERE id = \(bind: id) AND push_token_invalid_at IS NULL
            """).run()
    }
}
