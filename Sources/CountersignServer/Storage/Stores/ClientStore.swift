import FluentSQL
import Foundation

/// Every statement on `applications` and `clients` (a client belongs to exactly one application).
struct ClientStore {
    static let table = "clients"
    static let applicationTable = "applications"
    let sql: any SQLDatabase

    func client(_ id: String) async throws -> ClientRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: id)").first(decoding: ClientRecord.self)
    }

    /// The application of web client `webClientID`, its name and its first native client (nil when it has
    /// none); nil when the web client does not exist.
    func application(
        ofWebClient webClientID: String
    ) async throws -> (applicationID: String, applicationName: String, nativeClientID: String?)? {
        guard let row = try await sql.raw("""
            SELECT web.application_id, app.name AS application_name, (
                SELECT native.id FROM \(name: Self.table) native
                WHERE native.application_id = web.application_id AND native.kind = \(bind: ClientKind.native.rawValue)
                ORDER BY native.id LIMIT 1) AS native_client_id
            FROM \(name: Self.table) web JOIN \(name: Self.applicationTable) app ON app.id = web.application_id
            WHERE web.id = \(bind: webClientID)
            """).first()
        else { return nil }
        return (
            try row.decode(column: "application_id", as: String.self), try row.decode(column: "application_name", as: String.self),
            try row.decode(column: "native_client_id", as: String?.self))
    }

    func application(_ id: String) async throws -> ApplicationRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.applicationTable) WHERE id = \(bind: id)").first(decoding: ApplicationRecord.self)
    }

    /// Every application, by id.
    func applications() async throws -> [ApplicationRecord] {
        try await sql.raw("SELECT * FROM \(name: Self.applicationTable) ORDER BY id").all(decoding: ApplicationRecord.self)
    }

    /// Every client, or the clients of one application, by id.
    func clients(ofApplication applicationID: String? = nil) async throws -> [ClientRecord] {
        var query = sql.select().column("*").from(Self.table)
        if let applicationID { query = query.where("application_id", .equal, applicationID) }
        return try await query.orderBy("id").all(decoding: ClientRecord.self)
    }

    /// Adds an application; an id already taken fails with a constraint violation.
    func insert(_ application: ApplicationRecord) async throws {
        try await sql.insert(application, into: Self.applicationTable).run()
    }

    func rename(application id: String, to name: String) async throws {
        try await sql.update(Self.applicationTable).set("name", to: name).where("id", .equal, id).run()
    }

    /// Adds a client; an id already taken fails with a constraint violation.
    func insert(_ client: ClientRecord) async throws {
        try await sql.insert(client, into: Self.table).run()
    }

    /// Removes an application, its clients, its web origins and its users' memberships (the users stay).
    func delete(application id: String) async throws {
        try await sql.delete(from: MembershipStore.table).where("application_id", .equal, id).run()
        try await sql.delete(from: ApplicationOriginStore.table).where("application_id", .equal, id).run()
        try await sql.delete(from: Self.table).where("application_id", .equal, id).run()
        try await sql.delete(from: Self.applicationTable).where("id", .equal, id).run()
    }
}
