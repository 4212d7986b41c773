import FluentKit

/// Each approval and decoy keeps where its request came from (`RequestSource`), so that the push-fatigue
/// backoff counts a stranger's unanswered requests against the stranger's source, not against the person's
/// own sign-ins. Rows from before have none, and count as one source of their own.
struct AddApprovalSource: AsyncMigration {
    func prepare(on database: any Database) async throws {
        // SQLite adds one column per statement.
        try await database.schema(ApprovalStore.table).field(.string(ApprovalStore.sourceColumn), .string).update()
        try await database.schema(ApprovalStore.decoyTable).field(.string(ApprovalStore.sourceColumn), .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ApprovalStore.decoyTable).deleteField(.string(ApprovalStore.sourceColumn)).update()
        try await database.schema(ApprovalStore.table).deleteField(.string(ApprovalStore.sourceColumn)).update()
    }
}
