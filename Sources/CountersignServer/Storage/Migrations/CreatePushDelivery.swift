import FluentKit

/// Push provider configurations, the push queue, delivery attempts, and the push token state of devices.
struct CreatePushDelivery: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(PushConfigStore.table)
            .field("id", .string, .identifier(auto: false))
            .field("provider", .string, .required)
            .field("app_id", .string, .required)
            .field("key_id", .string, .required)
            .field("issuer", .string, .required)
            .field("environment", .string, .required)
            .field("endpoint", .string)
            .field("sealed_secret", .string, .required)
            .field("created_at", .datetime)
            .field("updated_at", .datetime)
            .unique(on: "provider", "app_id")
            .create()
        try await database.schema(PushJobStore.table)
            .field("id", .string, .identifier(auto: false))
            .field("approval_id", .string, .required, .references(ApprovalStore.table, "id"))
            .field("device_id", .string, .required)
            .field("channel", .string, .required)
            .field("status", .string, .required)
            .field("attempts", .int, .required)
            .field("next_attempt_at", .datetime, .required)
            .field("lease", .string)
            .field("last_reason", .string)
            .field("created_at", .datetime)
            .create()
        try await database.schema(PushJobStore.deliveryTable)
            .field("id", .string, .identifier(auto: false))
            .field("job_id", .string, .required)
            .field("approval_id", .string, .required)
            .field("device_id", .string, .required)
            .field("channel", .string, .required)
            .field("status", .string, .required)
            .field("reason", .string)
            .field("attempt", .int, .required)
            .field("attempted_at", .datetime, .required)
            .field("next_attempt_at", .datetime)
            .create()
        // SQLite adds one column per statement.
        try await database.schema(DeviceStore.table).field("push_token_invalid_at", .datetime).update()
        try await database.schema(DeviceStore.table).field("push_token_invalid_reason", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(DeviceStore.table).deleteField("push_token_invalid_reason").update()
        try await database.schema(DeviceStore.table).deleteField("push_token_invalid_at").update()
        try await database.schema(PushJobStore.deliveryTable).delete()
        try await database.schema(PushJobStore.table).delete()
        try await database.schema(PushConfigStore.table).delete()
    }
}
