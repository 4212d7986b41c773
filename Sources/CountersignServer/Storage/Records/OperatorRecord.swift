import Foundation

/// A person who runs this server from the console: a user of the console application (`ConsoleApplication`),
/// known by the email their phone was enrolled for.
struct OperatorRecord: Sendable {
    static let idPrefix = "opr"

    let id: String
    /// The console application's external user id for them.
    let email: String
    /// An `OperatorRole`.
    let role: String
    let createdAt: Date
}

/// What an operator may do: an auditor reads everything and changes nothing.
enum OperatorRole: String, Sendable, CaseIterable {
    case admin
    case auditor
}

extension OperatorRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        email = try row["email"]
        role = try row["role"]
        createdAt = try row["created_at"]
    }
}

/// A signed-in console: the cookie holds the secret, the table only its SHA-256.
struct ConsoleSessionRecord: Sendable {
    let idHash: String
    let operatorID: String
    let createdAt: Date
    let lastUsedAt: Date
    /// When the session ends whatever its use (`ConsoleSessions.longest` after sign-in).
    let expiresAt: Date
}

extension ConsoleSessionRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        idHash = try row["id_hash"]
        operatorID = try row["operator_id"]
        createdAt = try row["created_at"]
        lastUsedAt = try row["last_used_at"]
        expiresAt = try row["expires_at"]
    }
}
