import SQLKit
import Foundation

/// Every statement on `applications` and `clients` (a client belongs to exactly one application).
struct ClientStore {
    static let table = "clients"
    static let applicationTable = "applications"
    /// The application's list of the journeys its clients may start (`AddApplicationJourneys`).
    static let allowedJourneysColumn = "allowed_journeys"
    let sql: any SQLDatabase

    func client(_ id: String) async throws -> ClientRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: id)").first(decoding: ClientRecord.self)
    }

    /// A client as a start checks it.
    struct StartingClient {
        let record: ClientRecord
        /// The journeys its application lets its clients start; nil: any their kind may.
        let allowedJourneys: [String]?
        /// Whether its application lists the web origin the start came from.
        let listsOrigin: Bool
    }

    /// Client `id`, with what its application says of the journeys its clients may start and of the web
    /// origin `webOrigin` (nil: the start came from no other origin), in one read.
    func startingClient(_ id: String, webOrigin: String?) async throws -> StartingClient? {
        guard let row = try await sql.raw("""
            SELECT client.*, app.\(name: Self.allowedJourneysColumn), EXISTS (
                SELECT 1 FROM \(name: ApplicationOriginStore.table) listed
                WHERE listed.application_id = client.application_id AND listed.origin = \(bind: webOrigin)) AS lists_origin
            FROM \(name: Self.table) client JOIN \(name: Self.applicationTable) app ON app.id = client.application_id
            WHERE client.id = \(bind: id)
            """).first()
        else { return nil }
        return StartingClient(
            record: try row.decode(model: ClientRecord.self),
            allowedJourneys: try ApplicationRecord.journeyList(row.decode(column: Self.allowedJourneysColumn, as: String?.self)),
            listsOrigin: try row.decode(column: "lists_origin", as: Bool.self))
    }

    /// The application of a web client, as approvals for it need it.
    struct WebClientApplication: Sendable {
        let id: String
        /// What the push shows.
        let name: String
        /// The application's first native client (nil when it has none): the one the phone must use.
        let nativeClientID: String?
    }

    /// The application of web client `webClientID`; nil when the web client does not exist.
    func application(ofWebClient webClientID: String) async throws -> WebClientApplication? {
        try await sql.raw("""
            SELECT \(Self.webClientApplicationColumns)
            FROM \(Self.webClientWithApplication(webClientID))
            """).first().map(Self.webClientApplication(in:))
    }

    /// Web client `webClientID` as `web`, joined to its application as `app`: what follows the `FROM` of a
    /// read of `webClientApplicationColumns`, to which a caller may join more.
    static func webClientWithApplication(_ webClientID: String) -> SQLQueryString {
        """
        \(name: table) web JOIN \(name: applicationTable) app ON app.id = web.application_id AND web.id = \(bind: webClientID)
        """
    }

    /// The columns `webClientApplication(in:)` reads, from `webClientWithApplication`.
    static var webClientApplicationColumns: SQLQueryString {
        """
        web.application_id AS web_application_id, app.name AS web_application_name, (
            SELECT native.id FROM \(name: table) native
            WHERE native.application_id = web.application_id AND native.kind = \(bind: ClientKind.native.rawValue)
            ORDER BY native.id LIMIT 1) AS web_native_client_id
        """
    }

    static func webClientApplication(in row: any SQLRow) throws -> WebClientApplication {
        WebClientApplication(
            id: try row.decode(column: "web_application_id", as: String.self),
            name: try row.decode(column: "web_application_name", as: String.self),
            nativeClientID: try row.decode(column: "web_native_client_id", as: String?.self))
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

    /// Sets the journeys application `id`'s clients may start; nil lets them start any their kind may.
    func setAllowedJourneys(of id: String, to journeys: [String]?) async throws {
        try await sql.update(Self.applicationTable).set(Self.allowedJourneysColumn, to: try ApplicationRecord.journeysText(journeys))
            .where("id", .equal, id).run()
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
