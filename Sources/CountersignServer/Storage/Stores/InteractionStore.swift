import FluentSQL
import Foundation

/// Every statement on `interactions`.
struct InteractionStore {
    static let table = "interactions"
    let sql: any SQLDatabase

    /// The interaction, with the approval it answers when it is a mobile approve run, in one query.
    func find(_ id: String) async throws -> (interaction: InteractionRecord, approval: ApprovalRecord?)? {
        guard let row = try await sql.raw("""
            SELECT i.*, \(unsafeRaw: ApprovalRecord.CodingKeys.columns(of: "a", prefixedWith: Self.approvalPrefix))
            FROM \(ident: Self.table) i LEFT JOIN \(ident: ApprovalStore.table) a ON a.id = i.approval_id
            WHERE i.id = \(bind: id)
            """).first()
        else { return nil }
        let interaction = try row.decode(model: InteractionRecord.self)
        // No approval: not a mobile approve run, or its approval was swept.
        let hasApproval = try !row.decodeNil(column: Self.approvalPrefix + "id")
        return (interaction, hasApproval ? try row.decode(model: ApprovalRecord.self, prefix: Self.approvalPrefix) : nil)
    }

    /// How the approval's columns are named beside the interaction's own.
    private static let approvalPrefix = "answered_"

    func insert(_ record: InteractionRecord) async throws {
        try await sql.insert(into: Self.table).model(record).run()
    }

    /// Saves the run's next state if nobody saved one since `record` was read; returns whether it did.
    func saveNext(of record: InteractionRecord, state: String, tokenHash: String?, finished: Bool, userID: String?) async throws -> Bool {
        try await !sql.raw("""
            UPDATE \(ident: Self.table)
            SET token_hash = \(bind: tokenHash), version = version + 1, finished = \(bind: finished), state = \(bind: state),
                user_id = \(bind: userID)
            WHERE id = \(bind: record.id) AND version = \(bind: record.version)
            RETURNING id
            """).all().isEmpty
    }
}
