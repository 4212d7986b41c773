import Foundation

/// The answer that ended a run, kept for a client that lost it on the way: the token that asked for it
/// (`tokenHash`, SHA-256 hex) sends its call again until `expiresAt` and is answered the same. `answer`
/// is the reply's JSON, sealed with the master key for the interaction and that token.
///
/// A table of its own, not columns of `interactions`: the save that ends a run then changes no indexed
/// column there, which PostgreSQL can make a heap-only update.
struct IdempotentReplayRecord: Sendable {
    /// The interaction's id.
    let id: String
    let tokenHash: String
    let answer: String
    let expiresAt: Date
}

extension IdempotentReplayRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        tokenHash = try row["token_hash"]
        answer = try row["answer"]
        expiresAt = try row["expires_at"]
    }
}
