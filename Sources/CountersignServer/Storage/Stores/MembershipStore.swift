import SQLKit
import Foundation

/// Every statement on `user_applications`: which applications know which users. A user is found, and gets
/// tokens, only through the clients of an application they belong to: the one they were created or
/// enrolled through, or one the admin linked.
struct MembershipStore {
    static let table = "user_applications"
    let sql: any SQLDatabase

    /// Makes `userID` a member of the application of client `clientID` (no change when already one).
    func add(userID: String, applicationOfClient clientID: String, at now: Date) async throws {
        try await sql.raw("""
            INSERT INTO \(name: Self.table) (user_id, application_id, created_at)
            SELECT \(bind: userID), application_id, \(bind: now) FROM \(name: ClientStore.table) WHERE id = \(bind: clientID)
            ON CONFLICT DO NOTHING
            """).run()
    }

    /// Makes `userID` a member of `applicationID` (no change when already one).
    func add(userID: String, applicationID: String, at now: Date) async throws {
        try await sql.raw("""
            INSERT INTO \(name: Self.table) (user_id, application_id, created_at) VALUES (\(bind: userID), \(bind: applicationID), \(bind: now))
            ON CONFLICT DO NOTHING
            """).run()
    }

    /// Ends the membership; false when there was none.
    func remove(userID: String, applicationID: String) async throws -> Bool {
        try await sql.raw("""
            DELETE FROM \(name: Self.table) WHERE user_id = \(bind: userID) AND application_id = \(bind: applicationID) RETURNING user_id
            """).first() != nil
    }

    /// The applications `userID` belongs to, by id.
    func applications(ofUser userID: String) async throws -> [String] {
        try await sql.raw("""
            SELECT application_id FROM \(name: Self.table) WHERE user_id = \(bind: userID) ORDER BY application_id
            """).all().map { try $0.decode(column: "application_id", as: String.self) }
    }
}
