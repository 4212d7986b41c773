import Foundation

/// Every statement on `applications`, `clients` (a client belongs to exactly one application) and
/// `backend_clients` (what a backend client registered besides).
struct ClientStore {
    static let table = "clients"
    static let applicationTable = "applications"
    /// The application's list of the journeys its clients may start (`AddApplicationJourneys`).
    static let allowedJourneysColumn = "allowed_journeys"
    let db: any SQLExecutor

    func client(_ id: String) async throws -> ClientRecord? {
        try await db.first(ClientRecord.self, "SELECT * FROM clients WHERE id = $1", id)
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
        // A nil origin binds NULL, which equals no listed origin.
        guard let row = try await db.first("""
            SELECT client.*, app.allowed_journeys, EXISTS (
                SELECT 1 FROM application_origins listed
                WHERE listed.application_id = client.application_id AND listed.origin = $1) AS lists_origin
            FROM clients client JOIN applications app ON app.id = client.application_id
            WHERE client.id = $2
            """, webOrigin, id)
        else { return nil }
        return StartingClient(
            record: try ClientRecord(row: row),
            allowedJourneys: try ApplicationRecord.journeyList(row.decode(Self.allowedJourneysColumn, as: String?.self)),
            listsOrigin: try row.decode("lists_origin", as: Bool.self))
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
        try await db.first(Self.applicationOfWebClient, webClientID).map(Self.webClientApplication(in:))
    }

    private static let applicationOfWebClient = """
        SELECT \(webClientApplicationColumns)
        FROM \(webClientWithApplication("$1"))
        """

    /// Web client `webClientID` as `web`, joined to its application as `app`: what follows the `FROM` of a
    /// read of `webClientApplicationColumns`, to which a caller may join more. `webClientID` is the
    /// parameter the caller binds the web client's id to (`"$1"`), the fragment's only one; build the
    /// statement once, as a constant.
    static func webClientWithApplication(_ webClientID: String) -> String {
        "clients web JOIN applications app ON app.id = web.application_id AND web.id = \(webClientID)"
    }

    /// The columns `webClientApplication(in:)` reads, from `webClientWithApplication`. They bind nothing:
    /// the kind is written in (`ClientKind.native`).
    static let webClientApplicationColumns = """
        web.application_id AS web_application_id, app.name AS web_application_name, (
            SELECT native.id FROM clients native
            WHERE native.application_id = web.application_id AND native.kind = 'native'
            ORDER BY native.id LIMIT 1) AS web_native_client_id
        """

    static func webClientApplication(in row: DatabaseRow) throws -> WebClientApplication {
        WebClientApplication(
            id: try row["web_application_id"],
            name: try row["web_application_name"],
            nativeClientID: try row["web_native_client_id"])
    }

    func application(_ id: String) async throws -> ApplicationRecord? {
        try await db.first(ApplicationRecord.self, "SELECT * FROM applications WHERE id = $1", id)
    }

    /// Every application, by id.
    func applications() async throws -> [ApplicationRecord] {
        try await db.all(ApplicationRecord.self, "SELECT * FROM applications ORDER BY id")
    }

    /// Every client, or the clients of one application, by id.
    func clients(ofApplication applicationID: String? = nil) async throws -> [ClientRecord] {
        if let applicationID {
            try await db.all(ClientRecord.self, "SELECT * FROM clients WHERE application_id = $1 ORDER BY id", applicationID)
        } else {
            try await db.all(ClientRecord.self, "SELECT * FROM clients ORDER BY id")
        }
    }

    /// Every backend client's registration, or those of one application's, by client id.
    func backendClients(ofApplication applicationID: String? = nil) async throws -> [String: BackendClientRecord] {
        let records = if let applicationID {
            try await db.all(BackendClientRecord.self, """
                SELECT backend.* FROM backend_clients backend JOIN clients client ON client.id = backend.client_id
                WHERE client.application_id = $1
                """, applicationID)
        } else {
            try await db.all(BackendClientRecord.self, "SELECT * FROM backend_clients")
        }
        return Dictionary(uniqueKeysWithValues: records.map { ($0.clientID, $0) })
    }

    /// Backend client `id` with what it registered; nil when there is no backend client of that id.
    func backendClient(_ id: String) async throws -> (client: ClientRecord, backend: BackendClientRecord)? {
        guard let row = try await db.first("""
            SELECT client.*, backend.* FROM clients client JOIN backend_clients backend ON backend.client_id = client.id
            WHERE client.id = $1
            """, id)
        else { return nil }
        return (try ClientRecord(row: row), try BackendClientRecord(row: row))
    }

    /// Adds an application; an id already taken fails with a constraint violation.
    func insert(_ application: ApplicationRecord) async throws {
        try await db.run(
            "INSERT INTO applications (id, name, created_at, allowed_journeys) VALUES ($1, $2, $3, $4)",
            application.id, application.name, application.createdAt, application.allowedJourneys)
    }

    func rename(application id: String, to name: String) async throws {
        try await db.run("UPDATE applications SET name = $1 WHERE id = $2", name, id)
    }

    /// Sets the journeys application `id`'s clients may start; nil lets them start any their kind may.
    func setAllowedJourneys(of id: String, to journeys: [String]?) async throws {
        try await db.run("UPDATE applications SET allowed_journeys = $1 WHERE id = $2", try ApplicationRecord.journeysText(journeys), id)
    }

    /// Adds a client; an id already taken fails with a constraint violation.
    func insert(_ client: ClientRecord) async throws {
        try await db.run(
            "INSERT INTO clients (id, application_id, name, kind, created_at) VALUES ($1, $2, $3, $4, $5)",
            client.id, client.applicationID, client.name, client.kind, client.createdAt)
    }

    /// Adds what backend client `backend.clientID`, inserted before, registered.
    func insert(_ backend: BackendClientRecord) async throws {
        try await db.run("""
            INSERT INTO backend_clients (
                client_id, jwks, token_delivery_mode, notification_endpoint, request_signing_alg, authorization_details_types)
            VALUES ($1, $2, $3, $4, $5, $6)
            """,
            backend.clientID, backend.jwks, backend.tokenDeliveryMode, backend.notificationEndpoint, backend.requestSigningAlg,
            backend.authorizationDetailsTypes)
    }

    /// Removes an application, its clients, its web origins and its users' memberships (the users stay).
    func delete(application id: String) async throws {
        try await db.run("DELETE FROM user_applications WHERE application_id = $1", id)
        try await db.run("DELETE FROM application_origins WHERE application_id = $1", id)
        try await db.run("DELETE FROM ciba_requests WHERE client_id IN (SELECT id FROM clients WHERE application_id = $1)", id)
        try await db.run(
            "DELETE FROM backend_clients WHERE client_id IN (SELECT id FROM clients WHERE application_id = $1)", id)
        try await db.run("DELETE FROM clients WHERE application_id = $1", id)
        try await db.run("DELETE FROM applications WHERE id = $1", id)
    }
}
