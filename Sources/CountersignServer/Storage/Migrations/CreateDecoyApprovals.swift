import FluentKit
import FluentSQL

/// Decoy approvals: what an identifier with no phone waits on, so that it cannot be told from a registered
/// one (`DecoyApprovalRecord`).
struct CreateDecoyApprovals: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ApprovalStore.decoyTable)
            .field("id", .string, .identifier(auto: false))
            .field("application_id", .string, .required)
            .field("subject_digest", .string, .required)
            .field("web_interaction_id", .string, .required)
            .field("status", .string, .required)
            .field("failure_code", .string)
            .field("expires_at", .datetime, .required)
            .field("created_at", .datetime, .required)
            .field("resolved_at", .datetime)
            .create()
        let sql = try database.sql
        try await sql.create(index: "decoy_approvals_subject_created").on(ApprovalStore.decoyTable)
            .column("subject_digest").column("created_at").run()
        try await sql.create(index: "decoy_approvals_expires_at").on(ApprovalStore.decoyTable).column("expires_at").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ApprovalStore.decoyTable).delete()
    }
}
