import FluentKit
import FluentSQL

/// Push configurations as the admin API contract names them: a `name`, an FCM `token_endpoint` and a
/// `ca_certificate_pem` of their own. Jobs no longer keep a last reason (deliveries hold every reason).
struct AddPushConfigContractFields: AsyncMigration {
    func prepare(on database: any Database) async throws {
        // SQLite adds one column per statement.
        try await database.schema(PushConfigStore.table).field("name", .string, .required, .sql(.default(""))).update()
        try await database.schema(PushConfigStore.table).field("token_endpoint", .string).update()
        try await database.schema(PushConfigStore.table).field("ca_certificate_pem", .string).update()
        try await database.sql.raw("UPDATE \(name: PushConfigStore.table) SET name = app_id").run()
        try await database.schema(PushJobStore.table).deleteField("last_reason").update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(PushJobStore.table).field("last_reason", .string).update()
        try await database.schema(PushConfigStore.table).deleteField("ca_certificate_pem").update()
        try await database.schema(PushConfigStore.table).deleteField("token_endpoint").update()
        try await database.schema(PushConfigStore.table).deleteField("name").update()
    }
}
