import FluentKit

/// Removes what `AddInteractionApproval` added: a run is read alone, and nothing writes the column any more.
struct DropInteractionApproval: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await AddInteractionApproval().revert(on: database)
    }

    func revert(on database: any Database) async throws {
        try await AddInteractionApproval().prepare(on: database)
    }
}
