import CountersignCore
@testable import CountersignServer
import Testing

@Suite("A running server and a schema that changes under it")
struct SchemaChangeTests {
    /// On PostgreSQL every statement is prepared once per connection; a prepared `SELECT *` whose table
    /// gained a column is refused by PostgreSQL ("cached plan must not change result type") until it is
    /// prepared again.
    @Test("columns added to the tables while the server runs, as another instance's migration would, break no sign-in")
    func columnsAddedWhileRunning() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            // Twice, so that each statement of a sign-in is prepared on the connections it ran on.
            for _ in 0..<2 { try await signIn(server, phone) }
            let sql = server.sql
            for table in ["interactions", "approvals", "users", "devices", "clients", "applications", "biometric_keys", "push_jobs"] {
                try await sql.raw("ALTER TABLE \(ident: table) ADD COLUMN added_later TEXT").run()
            }
            for _ in 0..<2 { try await signIn(server, phone) }
        }
    }

    @Test("a second start applies no schema version again, and a database a later release changed is refused at start, naming its version, and left as it was")
    func schemaVersions() async throws {
        try await TestDatabase.with(persistent: true) { database in
            let masterKey = TestServer.randomMasterKey()
            let onPostgres = TestDatabase.postgresURL != nil
            let versions = onPostgres ? "SELECT version AS name FROM countersign_schema" : "SELECT identifier AS name FROM grdb_migrations"
            for _ in 0..<2 {
                try await TestServer.run(on: database, clock: TestClock(), masterKey: masterKey) { server in
                    let applied = try await server.sql.raw(TestSQL(stringLiteral: versions)).all().map { try $0.decode(column: "name", as: String.self) }
                    #expect(applied == ["0.1.0", "0.2.0"])
                }
            }
            try await TestServer.run(on: database, clock: TestClock(), masterKey: masterKey) { server in
                let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
                try await signIn(server, phone)
                let recordLater: TestSQL = onPostgres
                    ? "INSERT INTO countersign_schema (version, applied_at) VALUES ('9.0.0', now())"
                    : "INSERT INTO grdb_migrations (identifier) VALUES ('9.0.0')"
                try await server.sql.raw(recordLater).run()
            }
            let refusal = await #expect(throws: (any Error).self) {
                try await TestServer.run(on: database, clock: TestClock(), masterKey: masterKey) { _ in }
            }
            #expect("\(refusal.map(String.init(describing:)) ?? "")".contains("schema version 9.0.0, from a later release"))
        }
    }

    /// A web sign-in approved on the phone with the web code, ending with a verified token.
    private func signIn(_ server: TestServer, _ phone: RegisteredPhone) async throws {
        let browser = TestBrowser(server)
        let waiting = try await browser.signIn("web_login", email: phone.email)
        let otp = try #require(waiting.data?["otp"]?.stringValue)
        #expect(try await phone.approve(otp: otp).journeyStepID == JourneyStepID.success)
        let done = try await browser.poll()
        #expect(done.journeyStepID == JourneyStepID.success)
        _ = try await server.verifiedClaims(try #require(done.token))
    }
}
