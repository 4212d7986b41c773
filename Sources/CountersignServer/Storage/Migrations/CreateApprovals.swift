import FluentKit

/// Approvals, accepted device signatures and server secrets (web-to-mobile approval).
struct CreateApprovals: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ApprovalStore.table)
            .field("id", .string, .identifier(auto: false))
            .field("application_id", .string, .required)
            .field("web_client_id", .string, .required)
            .field("native_client_id", .string, .required)
            .field("web_interaction_id", .string, .required)
            .field("web_journey_id", .string, .required)
            .field("mobile_journey_id", .string, .required)
            .field("user_id", .string, .required, .references(UserStore.table, "id"))
            .field("device_id", .string, .required, .references(DeviceStore.table, "id"))
            .field("status", .string, .required)
            .field("failure_code", .string)
            .field("amr", .string, .required)
            .field("auth_time", .datetime)
            .field("approval_data", .string)
            .field("additional_data", .string)
            .field("correlation_id", .string)
            .field("otp_hash", .string)
            .field("otp_length", .int)
            .field("otp_attempts_left", .int, .required)
            .field("expires_at", .datetime, .required)
            .field("resolved_at", .datetime)
            .field("created_at", .datetime)
            .create()
        try await database.schema(UsedDeviceSignatureStore.table)
            .field("id", .string, .identifier(auto: false))
            .field("expires_at", .datetime, .required)
            .create()
        try await database.schema(ServerSecretStore.table)
            .field("id", .string, .identifier(auto: false))
            .field("value", .string, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ServerSecretStore.table).delete()
        try await database.schema(UsedDeviceSignatureStore.table).delete()
        try await database.schema(ApprovalStore.table).delete()
    }
}
