import FluentKit

/// Indexes in the order of the admin listings that page (`newestFirst`), so that each page is read from
/// an index rather than by sorting a table that grows with traffic.
struct AddListingIndexes: AsyncMigration {
    static let indexes: [AddQueryIndexes.Index] = [
        ("users_newest", UserStore.table, ["created_at", "id"]),
        ("security_events_newest", SecurityEventStore.table, ["created_at", "id"]),
        ("transaction_evidence_newest", EvidenceStore.table, ["signed_at", "id"]),
        ("push_deliveries_newest", PushJobStore.deliveryTable, ["attempted_at", "attempt", "id"]),
    ]

    func prepare(on database: any Database) async throws {
        try await AddQueryIndexes.create(Self.indexes, on: database)
    }

    func revert(on database: any Database) async throws {
        try await AddQueryIndexes.drop(Self.indexes, on: database)
    }
}
