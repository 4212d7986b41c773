import Foundation
import Journeys

/// Every statement on `interactions`.
struct InteractionStore {
    static let table = "interactions"
    let db: any SQLExecutor

    func find(_ id: String) async throws -> InteractionRecord? {
        try await db.first(InteractionRecord.self, "SELECT * FROM interactions WHERE id = $1", id)
    }

    /// The interaction `id` and, in the same read, how approval (or decoy) `approvalID` stands as of `now`
    /// (`ApprovalStore.status(in:at:)`): for a browser's wait on the approval its run is expected to wait on.
    func find(_ id: String, withStatusOf approvalID: String, at now: Date) async throws -> (record: InteractionRecord, approvalStatus: ApprovalStatus)? {
        let sql = DecoyApprovalRecord.isDecoy(approvalID) ? Self.findWithDecoyStatus : Self.findWithApprovalStatus
        guard let row = try await db.first(sql, approvalID, id)
        else { return nil }
        return (try InteractionRecord(row: row), try ApprovalStore.status(in: row, at: now))
    }

    private static func findWithStatus(in table: String) -> String {
        """
        SELECT i.*, a.status AS \(ApprovalStore.statusPrefix)status, a.expires_at AS \(ApprovalStore.statusPrefix)expires_at
        FROM interactions i LEFT JOIN \(table) a ON a.id = $1
        WHERE i.id = $2
        """
    }

    private static let findWithApprovalStatus = findWithStatus(in: ApprovalStore.table)
    private static let findWithDecoyStatus = findWithStatus(in: ApprovalStore.decoyTable)

    func insert(_ record: InteractionRecord) -> DeferredStatement {
        DeferredStatement(BoundStatement("""
            INSERT INTO interactions (id, journey_id, client_id, token_hash, version, finished, expires_at, state, created_at, user_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            """,
            record.id, record.journeyID, record.clientID, record.tokenHash, record.version, record.finished, record.expiresAt,
            record.state, record.createdAt, record.userID))
    }

    /// Saves the run's next state if nobody saved one since `record` was read: it changes no row otherwise.
    /// The token is compared as well as the version, so that a version number given twice (commits lost
    /// in a failover, a restored backup) cannot pass for the other save, but for two polls of one waiting
    /// step, which keep the token and differ only in when they polled. Returns the statement and the row
    /// as it leaves it.
    func saveNext(
        of record: InteractionRecord, state: String, tokenHash: String?, finished: Bool, userID: String?
    ) -> (statement: DeferredStatement, saved: InteractionRecord) {
        let saved = record.savedNext(state: state, tokenHash: tokenHash, finished: finished, userID: userID)
        let statement = DeferredStatement(returningChangedRows: BoundStatement("""
            UPDATE interactions SET token_hash = $1, version = $2, finished = $3, state = $4, user_id = $5
            WHERE id = $6 AND version = $7 AND token_hash = $8
            RETURNING id
            """,
            saved.tokenHash, saved.version, saved.finished, saved.state, saved.userID, record.id, record.version, record.tokenHash))
        return (statement, saved)
    }
}
