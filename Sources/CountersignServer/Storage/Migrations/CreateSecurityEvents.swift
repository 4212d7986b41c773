import FluentKit
import FluentSQL

/// Security events, and the index the push-fatigue limits read a user's newest approvals through.
struct CreateSecurityEvents: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(SecurityEventStore.table)
            .field("id", .string, .identifier(auto: false))
            .field("kind", .string, .required)
            .field("user_id", .string)
            .field("approval_id", .string)
            .field("device_id", .string)
            .field("detail", .string, .required)
            .field("created_at", .datetime, .required)
            .create()
        let sql = try database.sql
        try await sql.create(index: "security_events_user_kind_created").on(SecurityEventStore.table)
            .column("user_id").column("kind").column("created_at").run()
        try await sql.create(index: "security_events_created").on(SecurityEventStore.table).column("created_at").run()
        try await sql.create(index: "approvals_user_created").on(ApprovalStore.table).column("user_id").column("created_at").run()
    }

    func revert(on database: any Database) async throws {
        try await database.sql.drop(index: "approvals_user_created").run()
        try await database.schema(SecurityEventStore.table).delete()
    }
}
