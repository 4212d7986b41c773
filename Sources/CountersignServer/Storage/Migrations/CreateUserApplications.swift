import FluentKit
import FluentSQL
import Foundation

/// Users belong to applications. Users from before this table stay reachable through every application
/// that existed, as they were; the admin API narrows that (`DELETE /admin/v1/users/{id}/applications/{id}`).
struct CreateUserApplications: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(MembershipStore.table)
            .field("user_id", .string, .required, .references(UserStore.table, "id"))
            .field("application_id", .string, .required, .references(ClientStore.applicationTable, "id"))
            .field("created_at", .datetime, .required)
            .compositeIdentifier(over: "user_id", "application_id")
            .create()
        let sql = try database.sql
        try await sql.raw("""
            INSERT INTO \(name: MembershipStore.table) (user_id, application_id, created_at)
            SELECT users.id, applications.id, \(bind: Date())
            FROM \(name: UserStore.table) users CROSS JOIN \(name: ClientStore.applicationTable) applications
            """).run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(MembershipStore.table).delete()
    }
}
