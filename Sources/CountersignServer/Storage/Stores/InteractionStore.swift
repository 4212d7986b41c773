import FluentSQL
import Foundation

/// Every statement on `interactions`.
struct InteractionStore {
    static let table = "interactions"
    let sql: any SQLDatabase

    func find(_ id: String) async throws -> InteractionRecord? {
        try await sql.raw("SELECT * FROM \(ident: Self.table) WHERE id = \(bind: id)").first(decoding: InteractionRecord.self)
    }

    /// The interaction, with the approval (or decoy) it answers or waits on, read as a snapshot reads
    /// it, in one query: what a call on the run reads. Both tables are joined whichever the run has, so
    /// a decoy costs what an approval does.
    func findWithApproval(_ id: String) async throws -> (interaction: InteractionRecord, approval: ApprovalRead?)? {
        guard let row = try await sql.raw("""
            SELECT i.*, \(ApprovalStore.snapshotColumns(prefix: Self.approvalPrefix)),
                \(unsafeRaw: ApprovalOutcomeRow.CodingKeys.columns(of: "d", prefixedWith: Self.decoyPrefix))
            FROM \(ident: Self.table) i
                LEFT JOIN \(ident: ApprovalStore.table) a ON a.id = i.approval_id
                LEFT JOIN \(ident: UserStore.table) u ON u.id = a.user_id
                LEFT JOIN \(ident: ApprovalStore.decoyTable) d ON d.id = i.approval_id
            WHERE i.id = \(bind: id)
            """).first()
        else { return nil }
        let approval: ApprovalRead? =
            if try !row.decodeNil(column: Self.approvalPrefix + "id") {
                try ApprovalStore.read(in: row, prefix: Self.approvalPrefix)
            } else if try !row.decodeNil(column: Self.decoyPrefix + "id") {
                .decoy(try row.decode(model: ApprovalOutcomeRow.self, prefix: Self.decoyPrefix))
            } else {
                // Not a run with an approval, or its approval was swept.
                nil
            }
        return (try row.decode(model: InteractionRecord.self), approval)
    }

    /// How the approval's and the decoy's columns are named beside the interaction's own.
    private static let approvalPrefix = "approval_read_"
    private static let decoyPrefix = "decoy_read_"

    func insert(_ record: InteractionRecord) async throws {
        try await sql.insert(into: Self.table).model(record).run()
    }

    /// Saves the run's next state if nobody saved one since `record` was read; returns whether it did.
    func saveNext(
        of record: InteractionRecord, state: String, tokenHash: String?, finished: Bool, userID: String?, approvalID: String?
    ) async throws -> Bool {
        try await !sql.raw("""
            UPDATE \(ident: Self.table)
            SET token_hash = \(bind: tokenHash), version = version + 1, finished = \(bind: finished), state = \(bind: state),
                user_id = \(bind: userID), approval_id = \(bind: approvalID)
            WHERE id = \(bind: record.id) AND version = \(bind: record.version)
            RETURNING id
            """).all().isEmpty
    }
}
