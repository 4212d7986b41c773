import FluentKit
import FluentSQL

/// Each approval numbered within its user's history, and each decoy within its identifier's, unique
/// there. Two calls that read the same history and both decide to create the next request give it the same
/// number, so only one of them can commit it: the push-fatigue limits hold against requests made at the
/// same moment, on one instance or several (`ApprovalLimiter`). Rows from before have no number.
struct AddApprovalSubjectSequence: AsyncMigration {
    static let approvalsIndex = "approvals_user_sequence"
    static let decoysIndex = "decoy_approvals_subject_sequence"

    func prepare(on database: any Database) async throws {
        // SQLite adds one column per statement.
        try await database.schema(ApprovalStore.table).field(.string(ApprovalStore.sequenceColumn), .int).update()
        try await database.schema(ApprovalStore.decoyTable).field(.string(ApprovalStore.sequenceColumn), .int).update()
        let sql = try database.sql
        try await sql.create(index: Self.approvalsIndex).unique().on(ApprovalStore.table)
            .column("user_id").column(ApprovalStore.sequenceColumn).run()
        try await sql.create(index: Self.decoysIndex).unique().on(ApprovalStore.decoyTable)
            .column("subject_digest").column(ApprovalStore.sequenceColumn).run()
    }

    func revert(on database: any Database) async throws {
        let sql = try database.sql
        try await sql.drop(index: Self.decoysIndex).run()
        try await sql.drop(index: Self.approvalsIndex).run()
        try await database.schema(ApprovalStore.decoyTable).deleteField(.string(ApprovalStore.sequenceColumn)).update()
        try await database.schema(ApprovalStore.table).deleteField(.string(ApprovalStore.sequenceColumn)).update()
    }
}
