import Foundation

/// Every statement on `user_applications`: which applications know which users. A user is found, and gets
/// tokens, only through the clients of an application they belong to: the one they were created or
/// enrolled through, or one the admin linked.
struct MembershipStore {
    static let table = "user_applications"
    let db: any SQLExecutor

    /// Makes `userID` a member of the application of client `clientID` (no change when already one).
    func add(userID: String, applicationOfClient clientID: String, at now: Date) async throws {
        try await db.run("""
            INSERT INTO user_applications (user_id, application_id, created_at)
            SELECT $1, application_id, $2 FROM clients WHERE id = $3
            ON CONFLICT DO NOTHING
            """, userID, now, clientID)
    }

    /// Makes `userID` a member of `applicationID` (no change when already one).
    func add(userID: String, applicationID: String, at now: Date) async throws {
        try await db.run("""
            INSERT INTO user_applications (user_id, application_id, created_at) VALUES ($1, $2, $3)
            ON CONFLICT DO NOTHING
            """, userID, applicationID, now)
    }

    /// Ends the membership; false when there was none.
    func remove(userID: String, applicationID: String) async throws -> Bool {
        try await db.first(
            "DELETE FROM user_applications WHERE user_id = $1 AND application_id = $2 RETURNING user_id", userID, applicationID
        ) != nil
    }

    /// The applications `userID` belongs to, by id.
    func applications(ofUser userID: String) async throws -> [String] {
        try await db.all("SELECT application_id FROM user_applications WHERE user_id = $1 ORDER BY application_id", userID)
            .map { try $0.decode("application_id", as: String.self) }
    }
}
