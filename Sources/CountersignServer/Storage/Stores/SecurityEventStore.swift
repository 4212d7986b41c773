import FluentSQL
import Foundation

/// Every statement on `security_events`.
struct SecurityEventStore {
    static let table = "security_events"
    let sql: any SQLDatabase

    func insert(_ event: SecurityEventRecord) async throws {
        try await sql.insert(into: Self.table).model(event).run()
    }

    /// When the user's newest event of `kind` after `date` happened, if one did.
    func newest(_ kind: SecurityEventKind, ofUser userID: String, after date: Date) async throws -> Date? {
        try await sql.raw("""
            SELECT created_at FROM \(ident: Self.table)
            WHERE user_id = \(bind: userID) AND kind = \(bind: kind.rawValue) AND created_at > \(bind: date)
            ORDER BY created_at DESC LIMIT 1
            """).first(decodingColumn: "created_at", as: Date.self)
    }

    /// The newest `limit` events, of one user and one kind when given.
    func newest(userID: String?, kind: String?, limit: Int) async throws -> [SecurityEventRecord] {
        var query = sql.select().column("*").from(Self.table)
        if let userID { query = query.where("user_id", .equal, userID) }
        if let kind { query = query.where("kind", .equal, kind) }
        return try await query.orderBy("created_at", .descending).limit(limit).all(decoding: SecurityEventRecord.self)
    }
}
