import FluentKit

/// Where an approval's web request came from (shown on the phone), and which interactions reached a user
/// (the others are removed at expiry).
struct AddRequestContextAndInteractionUser: AsyncMigration {
    func prepare(on database: any Database) async throws {
        // SQLite adds one column per statement.
        try await database.schema(ApprovalStore.table).field("request_context", .string).update()
        try await database.schema(InteractionStore.table).field("user_id", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(InteractionStore.table).deleteField("user_id").update()
        try await database.schema(ApprovalStore.table).deleteField("request_context").update()
    }
}
