import SQLKit
import Foundation

/// Every statement on `transaction_evidence`. Evidence is never deleted.
struct EvidenceStore {
    static let table = "transaction_evidence"
    let sql: any SQLDatabase

    func insert(_ evidence: TransactionEvidenceRecord) async throws {
        try await sql.insert(evidence, into: Self.table).run()
    }

    func find(_ id: String) async throws -> TransactionEvidenceRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: id)").first(decoding: TransactionEvidenceRecord.self)
    }

    /// Evidence newest first, optionally of one user or approval.
    func newest(userID: String?, approvalID: String?, after: String?, limit: Int) async throws -> [TransactionEvidenceRecord] {
        var query = sql.select().column("*").from(Self.table)
        if let userID { query = query.where("user_id", .equal, userID) }
        if let approvalID { query = query.where("approval_id", .equal, approvalID) }
        return try await query.newestFirst(by: ["signed_at"], of: Self.table, after: after).limit(limit)
            .all(decoding: TransactionEvidenceRecord.self)
    }
}
