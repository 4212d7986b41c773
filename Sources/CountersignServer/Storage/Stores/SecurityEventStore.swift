import Foundation

/// Every statement on `security_events`.
struct SecurityEventStore {
    static let table = "security_events"
    let db: any SQLExecutor

    func insert(_ event: SecurityEventRecord) async throws {
        try await db.run("""
            INSERT INTO security_events (id, kind, user_id, approval_id, device_id, detail, actor, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """, event.id, event.kind, event.userID, event.approvalID, event.deviceID, event.detail, event.actor, event.createdAt)
    }

    /// The newest `limit` events, of one user, one kind and one actor when given.
    ///
    /// Ordered by `created_at`, then `id`; with `after` (the id of the last row of the page before) it
    /// continues after that row, so pages neither repeat nor skip a row whatever is added meanwhile, and an
    /// `after` that names no event gives no rows. A user is a statement of its own, an equality the
    /// `(user_id, kind, created_at)` index can answer; a kind not given is a NULL parameter (it has no index
    /// of its own, and with a user the index holds it).
    func newest(userID: String?, kind: String?, actor: String?, after: String?, limit: Int) async throws -> [SecurityEventRecord] {
        switch (userID, after) {
        case (let userID?, let after?): try await db.all(SecurityEventRecord.self, Self.newestOfUserAfter, userID, kind, actor, after, limit)
        case (let userID?, nil): try await db.all(SecurityEventRecord.self, Self.newestOfUser, userID, kind, actor, limit)
        case (nil, let after?): try await db.all(SecurityEventRecord.self, Self.newestAfter, kind, actor, after, limit)
        case (nil, nil): try await db.all(SecurityEventRecord.self, Self.newest, kind, actor, limit)
        }
    }

    private static let newest = """
        SELECT * FROM security_events
        WHERE (CAST($1 AS TEXT) IS NULL OR kind = $1) AND (CAST($2 AS TEXT) IS NULL OR actor = $2)
        ORDER BY created_at DESC, id DESC LIMIT $3
        """

    private static let newestAfter = """
        SELECT * FROM security_events
        WHERE (CAST($1 AS TEXT) IS NULL OR kind = $1) AND (CAST($2 AS TEXT) IS NULL OR actor = $2)
            AND (created_at, id) < (SELECT created_at, id FROM security_events WHERE id = $3)
        ORDER BY created_at DESC, id DESC LIMIT $4
        """

    private static let newestOfUser = """
        SELECT * FROM security_events
        WHERE user_id = $1 AND (CAST($2 AS TEXT) IS NULL OR kind = $2) AND (CAST($3 AS TEXT) IS NULL OR actor = $3)
        ORDER BY created_at DESC, id DESC LIMIT $4
        """

    private static let newestOfUserAfter = """
        SELECT * FROM security_events
        WHERE user_id = $1 AND (CAST($2 AS TEXT) IS NULL OR kind = $2) AND (CAST($3 AS TEXT) IS NULL OR actor = $3)
            AND (created_at, id) < (SELECT created_at, id FROM security_events WHERE id = $4)
        ORDER BY created_at DESC, id DESC LIMIT $5
        """
}
