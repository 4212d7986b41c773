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

    /// A release kept the approval a run waits on in `interactions.approval_id`; the next one reads a run
    /// alone and drops the column, so that an upgraded database and a new one have the same schema.
    @Test("a database migrated by the release that kept the approval beside the run loses that column at the next start, and signs in")
    func interactionApprovalColumnDropped() async throws {
        try await TestDatabase.with(persistent: true) { database in
            let masterKey = TestServer.randomMasterKey()
            try await TestServer.run(on: database, clock: TestClock(), masterKey: masterKey) { server in
                // As that release left the database: the column there, the migration that drops it not run.
                let sql = server.sql
                try await sql.raw("ALTER TABLE interactions ADD COLUMN approval_id TEXT").run()
                try await sql.raw("DELETE FROM _fluent_migrations WHERE name = \(bind: DropInteractionApproval().name)").run()
            }
            try await TestServer.run(on: database, clock: TestClock(), masterKey: masterKey) { server in
                let sql = server.sql
                await #expect(throws: (any Error).self, "the column is gone") {
                    try await sql.raw("SELECT approval_id FROM interactions").run()
                }
                let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
                try await signIn(server, phone)
            }
        }
    }

    /// Emails compare case-insensitively, and the server now keeps them in lower case; an earlier release
    /// stored the admin API's `Ada@Example.com` as given, which no sign-in form (lower-casing) could find.
    @Test("users an earlier release stored under an email with capitals get it in lower case at the next start, unless that is another user's")
    func emailUserIDsLowerCased() async throws {
        try await TestDatabase.with(persistent: true) { database in
            let masterKey = TestServer.randomMasterKey()
            try await TestServer.run(on: database, clock: TestClock(), masterKey: masterKey) { server in
                // As that release left the database: such users there, the migration not run.
                let sql = server.sql
                for (id, externalID) in [
                    ("usr_1", "Bob@Example.com"), ("usr_2", "Cy@Example.com"), ("usr_3", "cy@example.com"), ("usr_4", "Customer-7"),
                ] {
                    try await sql.raw("""
                        INSERT INTO users (id, external_user_id, created_at) VALUES (\(bind: id), \(bind: externalID), \(bind: server.clock.now()))
                        """).run()
                }
                try await sql.raw("DELETE FROM _fluent_migrations WHERE name = \(bind: LowerCaseEmailUserIDs().name)").run()
            }
            try await TestServer.run(on: database, clock: TestClock(), masterKey: masterKey) { server in
                let sql = server.sql
                let rows = try await sql.raw("SELECT id, external_user_id FROM users ORDER BY id").all()
                let stored = try rows.map { "\(try $0.decode(column: "id", as: String.self)) \(try $0.decode(column: "external_user_id", as: String.self))" }
                #expect(stored == ["usr_1 bob@example.com", "usr_2 Cy@Example.com", "usr_3 cy@example.com", "usr_4 Customer-7"])
                let found = try await server.admin(.GET, "users?external_user_id=BOB@example.com").body.arrayValue
                #expect(found?.first?["id"] == "usr_1")
            }
        }
    }

    /// `users.created_at` may be NULL in a database of an earlier release; a page comparing with NULL would
    /// stop short, so the listing indexes' migration gives such users the oldest time.
    @Test("users an earlier release kept without a creation time are listed, a page at a time, after the others")
    func usersWithoutCreationTimePaged() async throws {
        try await TestDatabase.with(persistent: true) { database in
            let masterKey = TestServer.randomMasterKey()
            try await TestServer.run(on: database, clock: TestClock(), masterKey: masterKey) { server in
                // As that release left the database: the listing indexes' migration not run.
                let sql = server.sql
                for index in AddListingIndexes.indexes { try await sql.drop(index: index.name).run() }
                try await sql.create(index: AddListingIndexes.replaced).on("security_events").column("created_at").run()
                try await sql.raw("DELETE FROM _fluent_migrations WHERE name = \(bind: AddListingIndexes().name)").run()
                try await sql.raw("INSERT INTO users (id, external_user_id) VALUES ('usr_old', 'old@example.com')").run()
                _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            }
            try await TestServer.run(on: database, clock: TestClock(), masterKey: masterKey) { server in
                let whole = try await ListPagesTests.page(server, "users", nil, limit: 1000, after: "")
                #expect(whole.count == 2 && whole.last == "usr_old")
                #expect(try await ListPagesTests.walk(server, "users", nil, size: 1) == whole)
            }
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
