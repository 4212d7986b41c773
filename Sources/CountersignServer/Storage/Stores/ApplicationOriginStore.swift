/// Every statement on `application_origins`: the web origins (`https://bank.example`) whose pages may
/// call the API for an application.
struct ApplicationOriginStore {
    static let table = "application_origins"
    let db: any SQLExecutor

    /// The origins of every application, by application id, each list sorted.
    func all() async throws -> [String: [String]] {
        let rows = try await db.all("SELECT application_id, origin FROM application_origins ORDER BY application_id, origin")
        var origins: [String: [String]] = [:]
        for row in rows {
            origins[try row.decode("application_id", as: String.self), default: []].append(try row.decode("origin", as: String.self))
        }
        return origins
    }

    /// The origins of `applicationID`, sorted.
    func origins(of applicationID: String) async throws -> [String] {
        try await db.all("SELECT origin FROM application_origins WHERE application_id = $1 ORDER BY origin", applicationID)
            .map { try $0.decode("origin", as: String.self) }
    }

    /// Replaces the origins of `applicationID` with `origins`: one insert per origin, the list's length
    /// varying (the caller holds them in one transaction).
    func replace(of applicationID: String, with origins: [String]) async throws {
        try await db.run("DELETE FROM application_origins WHERE application_id = $1", applicationID)
        for origin in origins {
            try await db.run("INSERT INTO application_origins (application_id, origin) VALUES ($1, $2)", applicationID, origin)
        }
    }

    /// Whether any application lists `origin`.
    func isListed(_ origin: String) async throws -> Bool {
        try await db.first("SELECT 1 AS listed FROM application_origins WHERE origin = $1 LIMIT 1", origin) != nil
    }
}
