import FluentKit
import FluentSQL

/// Where a run keeps the answer that ended it, for a while (`KeptAnswerRecord`), with an index on when
/// it goes, for the sweeper.
struct CreateKeptAnswers: AsyncMigration {
    static let indexes: [AddQueryIndexes.Index] = [("kept_answers_expires_at", KeptAnswerStore.table, ["expires_at"])]

    func prepare(on database: any Database) async throws {
        try await database.schema(KeptAnswerStore.table)
            .field("id", .string, .identifier(auto: false))
            .field("token_hash", .string, .required)
            .field("answer", .string, .required)
            .field("expires_at", .datetime, .required)
            .create()
        try await AddQueryIndexes.create(Self.indexes, on: database)
    }

    func revert(on database: any Database) async throws {
        try await database.schema(KeptAnswerStore.table).delete()
    }
}
