import SQLKit
import Foundation
import Journeys

/// Every statement on `interactions`.
struct InteractionStore {
    static let table = "interactions"
    let sql: any SQLDatabase

    func find(_ id: String) async throws -> InteractionRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: id)").first(decoding: InteractionRecord.self)
    }

    /// The interaction `id` and, in the same read, how approval (or decoy) `approvalID` stands as of `now`
    /// (`ApprovalStore.status(in:at:)`): for a browser's wait on the approval its run is expected to wait on.
    func find(_ id: String, withStatusOf approvalID: String, at now: Date) async throws -> (record: InteractionRecord, approvalStatus: ApprovalStatus)? {
        let prefix = ApprovalStore.statusPrefix
        guard let row = try await sql.raw("""
            SELECT i.*, a.status AS \(name: prefix + "status"), a.expires_at AS \(name: prefix + "expires_at")
            FROM \(name: Self.table) i LEFT JOIN \(name: ApprovalStore.table(of: approvalID)) a ON a.id = \(bind: approvalID)
            WHERE i.id = \(bind: id)
            """).first()
        else { return nil }
        return (try row.decode(model: InteractionRecord.self), try ApprovalStore.status(in: row, at: now))
    }

    func insert(_ record: InteractionRecord) throws -> DeferredStatement {
        DeferredStatement(try sql.insert(record, into: Self.table).query)
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
        let statement = DeferredStatement(returningChangedRows: """
            UPDATE \(name: Self.table)
            SET token_hash = \(bind: saved.tokenHash), version = \(bind: saved.version), finished = \(bind: saved.finished),
                state = \(bind: saved.state), user_id = \(bind: saved.userID)
            WHERE id = \(bind: record.id) AND version = \(bind: record.version) AND token_hash = \(bind: record.tokenHash)
            RETURNING id
            """)
        return (statement, saved)
    }
}
