import SQLKit

/// Every statement on `application_origins`: the web origins (`https://bank.example`) whose pages may
/// call the API for an application.
struct ApplicationOriginStore {
    static let table = "application_origins"
    let sql: any SQLDatabase

    /// The origins of every application, by application id, each list sorted.
    func all() async throws -> [String: [String]] {
        let rows = try await sql.raw("SELECT application_id, origin FROM \(name: Self.table) ORDER BY application_id, origin").all()
        var origins: [String: [String]] = [:]
        for row in rows {
            origins[try row.decode(column: "application_id", as: String.self), default: []].append(try row.decode(column: "origin", as: String.self))
        }
        return origins
    }

    /// The origins of `applicationID`, sorted.
    func origins(of applicationID: String) async throws -> [String] {
        try await sql.select().column("origin").from(Self.table).where("application_id", .equal, applicationID).orderBy("origin")
            .all(decodingColumn: "origin", as: String.self)
    }

    /// Replaces the origins of `applicationID` with `origins`.
    func replace(of applicationID: String, with origins: [String]) async throws {
        try await sql.delete(from: Self.table).where("application_id", .equal, applicationID).run()
        guard !origins.isEmpty else { return }
        var insert = sql.insert(into: Self.table).columns("application_id", "origin")
        for origin in origins { insert = insert.values(SQLBind(applicationID), SQLBind(origin)) }
        try await insert.run()
    }

    /// Whether any application lists `origin`.
    func isListed(_ origin: String) async throws -> Bool {
        try await sql.raw("SELECT 1 AS listed FROM \(name: Self.table) WHERE origin = \(bind: origin) LIMIT 1").first() != nil
    }
}
