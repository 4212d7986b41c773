import FluentSQL
import Foundation

/// Every statement on `interactions`.
struct InteractionStore {
    static let table = "interactions"
    let sql: any SQLDatabase

    func find(_ id: String) async throws -> InteractionRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: id)").first(decoding: InteractionRecord.self)
    }

    func insert(_ record: InteractionRecord) throws -> HeldStatement {
        HeldStatement(try sql.insert(record, into: Self.table).query)
    }

    /// Saves the run's next state if nobody saved one since `record` was read: it changes no row otherwise.
    func saveNext(of record: InteractionRecord, state: String, tokenHash: String?, finished: Bool, userID: String?) -> HeldStatement {
        HeldStatement(returningChangedRows: """
            UPDATE \(name: Self.table)
            SET token_hash = \(bind: tokenHash), version = version + 1, finished = \(bind: finished), state = \(bind: state),
                user_id = \(bind: userID)
            WHERE id = \(bind: record.id) AND version = \(bind: record.version)
            RETURNING id
            """)
    }
}
