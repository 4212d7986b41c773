import FluentKit

/// An earlier release kept the approval a run answers or waits on beside the run; the column is removed
/// again by `DropInteractionApproval`. Both stay in the list, so that a database migrated by that release
/// and a new one end with the same schema.
struct AddInteractionApproval: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(InteractionStore.table).field("approval_id", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(InteractionStore.table).deleteField("approval_id").update()
    }
}
