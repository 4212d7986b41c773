import SQLKit
import Foundation

/// Every statement on `idempotent_replays` but the sweeper's, which removes them once expired.
struct IdempotentReplayStore {
    static let table = "idempotent_replays"
    let sql: any SQLDatabase

    /// Keeps `record`, held with the save that ends its run (which happens once: the save is a
    /// compare-and-set on a running row, so a second never holds; an answer already kept stays).
    func insert(_ record: IdempotentReplayRecord) throws -> DeferredStatement {
        DeferredStatement(try sql.insert(record, into: Self.table).ignoringConflicts(with: ["id"]).query)
    }

    func find(_ interactionID: String) async throws -> IdempotentReplayRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: interactionID)").first(decoding: IdempotentReplayRecord.self)
    }
}
