import FluentKit

/// One-time enrollment codes (secure enrollment).
struct CreateEnrollmentCodes: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(EnrollmentCodeStore.table)
            .field("id", .string, .identifier(auto: false))
            .field("code_hash", .string, .required)
            .field("external_user_id", .string, .required)
            .field("client_id", .string)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("used_at", .datetime)
            .unique(on: "code_hash")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(EnrollmentCodeStore.table).delete()
    }
}
