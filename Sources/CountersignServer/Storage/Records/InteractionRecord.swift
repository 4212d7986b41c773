import FluentSQL
import Foundation

/// One journey run. The run's state is one JSON document; `version` guards it against two submits
/// racing with the same interaction token.
///
/// Read and written with plain SQL rather than a Fluent model: every browser and phone call loads and
/// saves one, and the model machinery (reflection per row, generated SQL) cost more than the query.
struct InteractionRecord: Codable, Sendable {
    static let schema = "interactions"

    let id: String
    let journeyID: String
    let clientID: String
    /// SHA-256 (hex) of the interaction token the next submit must present; nil once finished.
    let tokenHash: String?
    let version: Int
    let finished: Bool
    let expiresAt: Date
    let state: String
    let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, version, finished, state
        case journeyID = "journey_id"
        case clientID = "client_id"
        case tokenHash = "token_hash"
        case expiresAt = "expires_at"
        case createdAt = "created_at"
    }

    static func find(_ id: String, on sql: any SQLDatabase) async throws -> InteractionRecord? {
        try await sql.raw("SELECT * FROM \(ident: schema) WHERE id = \(bind: id)").first(decoding: InteractionRecord.self)
    }

    func insert(on sql: any SQLDatabase) async throws {
        try await sql.insert(into: Self.schema).model(self).run()
    }

    /// Saves the run's next state if nobody saved one since this record was read; returns whether it did.
    func saveNext(state: String, tokenHash: String?, finished: Bool, on sql: any SQLDatabase) async throws -> Bool {
        try await !sql.raw("""
            UPDATE \(ident: Self.schema)
            SET token_hash = \(bind: tokenHash), version = version + 1, finished = \(bind: finished), state = \(bind: state)
            WHERE id = \(bind: id) AND version = \(bind: version)
            RETURNING id
            """).all().isEmpty
    }
}
