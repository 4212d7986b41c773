import FluentSQL
import Foundation

/// Every statement on `kept_answers` but the sweeper's, which removes them once expired.
struct KeptAnswerStore {
    static let table = "kept_answers"
    let sql: any SQLDatabase

    /// Keeps `record`, held with the save that ends its run (which happens once: the save is a
    /// compare-and-set on a running row, so a second never holds; an answer already kept stays).
    func insert(_ record: KeptAnswerRecord) throws -> HeldStatement {
        HeldStatement(try sql.insert(record, into: Self.table).ignoringConflicts(with: ["id"]).query)
    }

    func find(_ interactionID: String) async throws -> KeptAnswerRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: interactionID)").first(decoding: KeptAnswerRecord.self)
    }
}
