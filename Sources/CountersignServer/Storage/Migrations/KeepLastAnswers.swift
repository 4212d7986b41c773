import FluentKit
import FluentSQL

/// Where a run keeps the answer that ended it, for a while (`InteractionRecord.answer`), and an index of
/// the rows that keep one, by when it goes, for the sweeper: it holds only those rows.
struct KeepLastAnswers: AsyncMigration {
    static let index = "interactions_kept_answers"

    func prepare(on database: any Database) async throws {
        // SQLite adds one column per statement.
        try await database.schema(InteractionStore.table).field("answer", .string).update()
        try await database.schema(InteractionStore.table).field("answer_token_hash", .string).update()
        try await database.schema(InteractionStore.table).field("answer_kept_until", .datetime).update()
        try await database.sql.raw("""
            CREATE INDEX \(name: Self.index) ON \(name: InteractionStore.table) (answer_kept_until) WHERE answer_kept_until IS NOT NULL
            """).run()
    }

    func revert(on database: any Database) async throws {
        try await database.sql.drop(index: Self.index).run()
        for field in ["answer_kept_until", "answer_token_hash", "answer"] {
            try await database.schema(InteractionStore.table).deleteField(.string(field)).update()
        }
    }
}
