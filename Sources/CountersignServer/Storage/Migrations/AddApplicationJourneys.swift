import FluentKit

/// Each application may list the journeys its clients may start (`allowed_journeys`, JSON text); none
/// listed, as for every application from before, lets them start any journey their kind may.
struct AddApplicationJourneys: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ClientStore.applicationTable).field(.string(ClientStore.allowedJourneysColumn), .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ClientStore.applicationTable).deleteField(.string(ClientStore.allowedJourneysColumn)).update()
    }
}
