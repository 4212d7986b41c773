import Fluent

/// The approval a run answers or waits on, beside the run: read with it on every call (`InteractionStore.find`).
struct AddInteractionApproval: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(InteractionStore.table).field("approval_id", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(InteractionStore.table).deleteField("approval_id").update()
    }
}
