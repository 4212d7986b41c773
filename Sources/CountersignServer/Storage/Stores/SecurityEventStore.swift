import SQLKit
import Foundation

/// Every statement on `security_events`.
struct SecurityEventStore {
    static let table = "security_events"
    let sql: any SQLDatabase

    func insert(_ event: SecurityEventRecord) async throws {
        try await sql.insert(event, into: Self.table).run()
    }

    /// The newest `limit` events, of one user and one kind when given.
    func newest(userID: String?, kind: String?, after: String?, limit: Int) async throws -> [SecurityEventRecord] {
        var query = sql.select().column("*").from(Self.table)
        if let userID { query = query.where("user_id", .equal, userID) }
        if let kind { query = query.where("kind", .equal, kind) }
        return try await query.newestFirst(by: ["created_at"], of: Self.table, after: after).limit(limit).all(decoding: SecurityEventRecord.self)
    }
}
