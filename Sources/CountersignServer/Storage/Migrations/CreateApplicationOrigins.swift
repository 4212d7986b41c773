import FluentKit
import FluentSQL

/// The web origins each application's pages call the API from (CORS).
struct CreateApplicationOrigins: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ApplicationOriginStore.table)
            .field("application_id", .string, .required, .references(ClientStore.applicationTable, "id"))
            .field("origin", .string, .required)
            .compositeIdentifier(over: "application_id", "origin")
            .create()
        try await database.sql.create(index: "application_origins_origin").on(ApplicationOriginStore.table).column("origin").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ApplicationOriginStore.table).delete()
    }
}
