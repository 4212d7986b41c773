import Foundation

/// Every statement on `operators`.
struct OperatorStore {
    static let table = "operators"
    let db: any SQLExecutor

    func insert(_ record: OperatorRecord) async throws {
        try await db.run(
            "INSERT INTO operators (id, email, role, created_at) VALUES ($1, $2, $3, $4)",
            record.id, record.email, record.role, record.createdAt)
    }

    func find(_ id: String) async throws -> OperatorRecord? {
        try await db.first(OperatorRecord.self, "SELECT * FROM operators WHERE id = $1", id)
    }

    func find(email: String) async throws -> OperatorRecord? {
        try await db.first(OperatorRecord.self, "SELECT * FROM operators WHERE email = $1", email)
    }

    /// Every operator, in the order they were invited.
    func all() async throws -> [OperatorRecord] {
        try await db.all(OperatorRecord.self, "SELECT * FROM operators ORDER BY created_at, id")
    }

    /// Removes the operator and ends their sessions; false when there was no such operator.
    func delete(_ id: String) async throws -> Bool {
        try await db.run("DELETE FROM console_sessions WHERE operator_id = $1", id)
        return try await db.first("DELETE FROM operators WHERE id = $1 RETURNING id", id) != nil
    }
}

/// Every statement on `console_sessions`.
struct ConsoleSessionStore {
    static let table = "console_sessions"
    let db: any SQLExecutor

    func insert(_ session: ConsoleSessionRecord) async throws {
        try await db.run("""
            INSERT INTO console_sessions (id_hash, operator_id, created_at, last_used_at, expires_at)
            VALUES ($1, $2, $3, $4, $5)
            """, session.idHash, session.operatorID, session.createdAt, session.lastUsedAt, session.expiresAt)
    }

    /// The session and its operator, while it is within its lifetime and was used since `idleSince`.
    func live(idHash: String, at now: Date, usedSince idleSince: Date) async throws -> (ConsoleSessionRecord, OperatorRecord)? {
        guard let row = try await db.first("""
            SELECT s.id_hash, s.operator_id, s.created_at, s.last_used_at, s.expires_at, o.email, o.role, o.created_at AS operator_created_at
            FROM console_sessions s JOIN operators o ON o.id = s.operator_id
            WHERE s.id_hash = $1 AND s.expires_at > $2 AND s.last_used_at > $3
            """, idHash, now, idleSince)
        else { return nil }
        let session = try ConsoleSessionRecord(row: row)
        return (session, OperatorRecord(
            id: session.operatorID, email: try row["email"], role: try row["role"], createdAt: try row["operator_created_at"]))
    }

    func touch(idHash: String, at now: Date) async throws {
        try await db.run("UPDATE console_sessions SET last_used_at = $1 WHERE id_hash = $2", now, idHash)
    }

    func delete(idHash: String) async throws {
        try await db.run("DELETE FROM console_sessions WHERE id_hash = $1", idHash)
    }

    /// Forgets sessions that ended, by their lifetime or their idle time.
    func deleteEnded(at now: Date, usedBefore idleSince: Date) async throws {
        try await db.run("DELETE FROM console_sessions WHERE expires_at <= $1 OR last_used_at <= $2", now, idleSince)
    }
}
