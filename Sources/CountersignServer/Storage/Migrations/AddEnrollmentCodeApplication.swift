import FluentKit

/// Each enrollment code belongs to one application, and only that application's native clients redeem
/// it: a code issued for one application could otherwise link its user to another.
struct AddEnrollmentCodeApplication: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(EnrollmentCodeStore.table).field("application_id", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(EnrollmentCodeStore.table).deleteField("application_id").update()
    }
}
