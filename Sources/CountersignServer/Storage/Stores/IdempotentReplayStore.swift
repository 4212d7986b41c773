import Foundation

/// Every statement on `idempotent_replays` but the sweeper's, which removes them once expired.
struct IdempotentReplayStore {
    static let table = "idempotent_replays"
    let db: any SQLExecutor

    /// Keeps `record`, held with the save that ends its run (which happens once: the save is a
    /// compare-and-set on a running row, so a second never holds; an answer already kept stays).
    func insert(_ record: IdempotentReplayRecord) -> DeferredStatement {
        DeferredStatement(BoundStatement("""
            INSERT INTO idempotent_replays (id, token_hash, answer, expires_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (id) DO NOTHING
            """, record.id, record.tokenHash, record.answer, record.expiresAt))
    }

    func find(_ interactionID: String) async throws -> IdempotentReplayRecord? {
        try await db.first(IdempotentReplayRecord.self, "SELECT * FROM idempotent_replays WHERE id = $1", interactionID)
    }
}
