import FluentSQL
import Foundation

/// Every statement on `devices`.
struct DeviceStore {
    static let table = "devices"
    let sql: any SQLDatabase

    func find(_ id: String) async throws -> DeviceRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: id)").first(decoding: DeviceRecord.self)
    }

    /// The user `externalUserID` of the application of client `clientID` and their active devices, newest
    /// first, in one query; nil when there is no such user.
    func active(ofUser externalUserID: String, inApplicationOfClient clientID: String) async throws -> (user: UserRecord, devices: [DeviceRecord])? {
        // One row per device, or one with no device: the user's columns renamed, as a device has some of the same names.
        let rows = try await sql.raw("""
            SELECT dev.*, \(unsafeRaw: UserRecord.CodingKeys.columns(of: "users", prefixedWith: Self.userPrefix))
            FROM \(UserStore.user(externalUserID, inApplicationOfClient: clientID))
            LEFT JOIN \(name: Self.table) dev ON dev.user_id = users.id AND dev.status = \(bind: CredentialStatus.active.rawValue)
            ORDER BY dev.created_at DESC
            """).all()
        guard let first = rows.first else { return nil }
        let user = try first.decode(model: UserRecord.self, prefix: Self.userPrefix)
        let devices = try rows.compactMap { try $0.decode(joined: DeviceRecord.self) }
        return (user, devices)
    }

    /// How the user's columns are named beside their devices'.
    private static let userPrefix = "member_"

    /// All the user's devices, revoked ones too, oldest first.
    func all(ofUser userID: String) async throws -> [DeviceRecord] {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE user_id = \(bind: userID) ORDER BY created_at")
            .all(decoding: DeviceRecord.self)
    }

    func insert(_ device: DeviceRecord) async throws {
        try await sql.insert(device, into: Self.table).run()
    }

    func revoke(_ id: String, at now: Date) async throws {
        try await revokeCredential(id, in: Self.table, at: now, on: sql)
    }

    /// Records that the push provider refused the device's token (the first refusal is kept).
    func markPushTokenInvalid(_ id: String, reason: String, at now: Date) async throws {
        try await sql.raw("""
            UPDATE \(name: Self.table) SET push_token_invalid_at = \(bind: now), push_token_invalid_reason = \(bind: reason)
            WHERE id = \(bind: id) AND push_token_invalid_at IS NULL
            """).run()
    }
}
