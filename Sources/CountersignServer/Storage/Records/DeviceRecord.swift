import Foundation

/// A phone bound to a user by its device key, and how to reach it.
struct DeviceRecord: Sendable {
    let id: String
    let userID: String
    /// Base64 SPKI DER of the P-256 device key.
    let publicKey: String
    let name: String
    let model: String
    let os: String
    let pushChannel: String
    let pushToken: String?
    let pushAppID: String?
    /// Set when the push provider said the token is no longer valid; the device stays registered.
    let pushTokenInvalidAt: Date?
    let pushTokenInvalidReason: String?
    /// A `CredentialStatus`.
    let status: String
    let createdAt: Date?
    let revokedAt: Date?
    /// The native client it enrolled through (nil for a device enrolled before 0.2.0): a phone enrolled
    /// through a bank's app is no key to the console (`ConsoleSessions`).
    let clientID: String?

    /// Not revoked: it may be pushed to and may answer.
    var isActive: Bool { status == CredentialStatus.active.rawValue }
}

extension DeviceRecord: RowDecodable {
    /// The columns of `devices` a record reads, as `init(row:prefix:)` reads them.
    static let columnNames = [
        "id", "user_id", "public_key", "name", "model", "os", "push_channel", "push_token", "push_app_id",
        "push_token_invalid_at", "push_token_invalid_reason", "status", "created_at", "revoked_at", "client_id",
    ]

    /// Every column of a device, read from table alias `alias` and each renamed `prefix` + its name: for a
    /// statement that reads the device beside columns of the same names (`init(row:prefix:)` reads it
    /// back). Build the statement with it once, as a `static let`.
    static func columns(of alias: String, prefixedWith prefix: String) -> String {
        columnNames.map { "\(alias).\($0) AS \(prefix)\($0)" }.joined(separator: ", ")
    }

    init(row: DatabaseRow) throws {
        try self.init(row: row, prefix: "")
    }

    /// The device whose columns `row` names `prefix` + their own.
    init(row: DatabaseRow, prefix: String) throws {
        id = try row[prefix + "id"]
        userID = try row[prefix + "user_id"]
        publicKey = try row[prefix + "public_key"]
        name = try row[prefix + "name"]
        model = try row[prefix + "model"]
        os = try row[prefix + "os"]
        pushChannel = try row[prefix + "push_channel"]
        pushToken = try row[prefix + "push_token"]
        pushAppID = try row[prefix + "push_app_id"]
        pushTokenInvalidAt = try row[prefix + "push_token_invalid_at"]
        pushTokenInvalidReason = try row[prefix + "push_token_invalid_reason"]
        status = try row[prefix + "status"]
        createdAt = try row[prefix + "created_at"]
        revokedAt = try row[prefix + "revoked_at"]
        clientID = try row[prefix + "client_id"]
    }

    /// The device a `LEFT JOIN` read beside others, its columns named `prefix` + their own; nil when the
    /// join found none (its `id` is NULL).
    init?(joinedIn row: DatabaseRow, prefix: String = "") throws {
        if try row.isNull(prefix + "id") { return nil }
        try self.init(row: row, prefix: prefix)
    }
}
