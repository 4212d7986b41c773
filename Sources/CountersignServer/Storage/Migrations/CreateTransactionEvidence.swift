import FluentKit

/// Evidence of signed transactions (transaction signing).
struct CreateTransactionEvidence: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(EvidenceStore.table)
            .field("id", .string, .identifier(auto: false))
            .field("user_id", .string, .required, .references(UserStore.table, "id"))
            .field("external_user_id", .string, .required)
            .field("device_id", .string)
            .field("public_key_id", .string, .required)
            .field("public_key", .string, .required)
            .field("approval_data", .string, .required)
            .field("nonce", .string, .required)
            .field("challenge", .string, .required)
            .field("signature", .string, .required)
            .field("journey_id", .string, .required)
            .field("approval_id", .string)
            .field("signed_at", .datetime, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(EvidenceStore.table).delete()
    }
}
