import FluentKit
import FluentSQL
import Foundation

/// Indexes in the order of the admin listings that page (`newestFirst`), so that each page is read from
/// an index rather than by sorting a table that grows with traffic. The security events' index on their
/// time alone goes: the new one begins with it.
struct AddListingIndexes: AsyncMigration {
    static let indexes: [AddQueryIndexes.Index] = [
        ("users_newest", UserStore.table, ["created_at", "id"]),
        ("security_events_newest", SecurityEventStore.table, ["created_at", "id"]),
        ("transaction_evidence_newest", EvidenceStore.table, ["signed_at", "id"]),
        ("push_deliveries_newest", PushJobStore.deliveryTable, ["attempted_at", "attempt", "id"]),
    ]

    func prepare(on database: any Database) async throws {
        // A user kept without a creation time would stop a page short (a comparison with NULL is never
        // true): such users are listed as the oldest.
        try await database.sql.raw("""
            UPDATE \(name: UserStore.table) SET created_at = \(bind: Date(timeIntervalSince1970: 0)) WHERE created_at IS NULL
            """).run()
        try await AddQueryIndexes.create(Self.indexes, on: database)
        try await database.sql.drop(index: Self.replaced).run()
    }

    func revert(on database: any Database) async throws {
        try await database.sql.create(index: Self.replaced).on(SecurityEventStore.table).column("created_at").run()
        try await AddQueryIndexes.drop(Self.indexes, on: database)
    }

    /// The index `CreateSecurityEvents` made on the events' time, which `security_events_newest` covers.
    static let replaced = "security_events_created"
}
