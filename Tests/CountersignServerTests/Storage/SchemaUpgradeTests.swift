import CountersignCore
@testable import CountersignServer
import Crypto
import Foundation
import GRDB
import Logging
import PostgresNIO
import Testing

/// Each release that changes the schema adds a version; a database the release before made must come up
/// whole under the new one. The database of 0.1.0 is made here as 0.1.0 made it: its version's statements
/// (which never change: their digest is pinned) recorded as that release recorded them.
@Suite("Upgrading a database made by an earlier release")
struct SchemaUpgradeTests {
    @Test("the statements of released schema versions never change")
    func releasedVersionsPinned() {
        func digest(_ version: SchemaVersion) -> String {
            SHA256.hash(data: Data(version.statements.joined(separator: "\n;\n").utf8)).map { String(format: "%02x", $0) }.joined()
        }
        #expect(SQLiteSchema.versions.map(\.name).prefix(1) == ["0.1.0"])
        #expect(PostgresSchema.versions.map(\.name).prefix(1) == ["0.1.0"])
        #expect(digest(SQLiteSchema.versions[0]) == "b047d099d81f8086358d3965a0eaca799efe083cfadbec7f880334193e132685")
        #expect(digest(PostgresSchema.versions[0]) == "ed980d91718686bd5a9d630644846a482ccf0c9d28e0e2ca6d80cea12332b520")
    }

    @Test("a database of 0.1.0 with a user and a phone is brought to 0.2.0 at start: its rows read as before, and sign-ins use the new table")
    func from0_1_0() async throws {
        try await TestDatabase.with(persistent: true) { database in
            try await Self.make0_1_0(database.location)
            try await TestServer.run(on: database, clock: TestClock(), masterKey: TestServer.randomMasterKey()) { server in
                let users = try await server.admin(.GET, "users?external_user_id=old@example.com").body.arrayValue ?? []
                #expect(users.count == 1)
                let shown = try await server.admin(.GET, "users/usr_old").body
                #expect(shown["devices"]?.arrayValue?.first?["id"] == .string("dev_old"))
                #expect(shown["applications"] == ["legacy"])

                let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
                let browser = TestBrowser(server)
                let waiting = try await browser.signIn("web_login", email: phone.email)
                #expect(try await phone.approve(otp: try #require(waiting.data?["otp"]?.stringValue)).journeyStepID == JourneyStepID.success)
                let done = try await browser.poll()
                #expect(done.data?["browser_credential"]?.stringValue != nil)
                #expect(try await server.count("browser_credentials") == 1)
            }
        }
    }

    /// The rows of 0.1.0's tables the upgrade must keep.
    private static let rows = [
        "INSERT INTO applications (id, name, created_at) VALUES ('legacy', 'Legacy', NULL)",
        "INSERT INTO clients (id, application_id, name, kind, created_at) VALUES ('legacy-web', 'legacy', 'Web', 'web', NULL)",
        "INSERT INTO users (id, external_user_id, email, created_at) VALUES ('usr_old', 'old@example.com', 'old@example.com', NULL)",
        """
        INSERT INTO devices (id, user_id, public_key, name, model, os, push_channel, status)
        VALUES ('dev_old', 'usr_old', 'AAAA', 'Old phone', 'Phone', 'iOS', 'inbox', 'active')
        """,
    ]

    /// A database at `location` as release 0.1.0 left it, with `rows`.
    private static func make0_1_0(_ location: DatabaseLocation) async throws {
        switch location {
        case .sqliteFile(let path):
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                for statement in SQLiteSchema.versions[0].statements { try db.execute(sql: statement) }
                // As GRDB's migrator records an applied migration.
                try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('0.1.0')")
                for row in rows { try db.execute(sql: row) }
                try db.execute(sql: "INSERT INTO user_applications (user_id, application_id, created_at) VALUES ('usr_old', 'legacy', 0)")
            }
            try queue.close()
        case .postgres(let url):
            let components = try #require(URLComponents(string: url))
            let logger = Logger(label: "countersign.tests.upgrade")
            let connection = try await PostgresConnection.connect(
                configuration: .init(
                    host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "postgres",
                    password: components.password, database: String(components.path.dropFirst()), tls: .disable),
                id: 1, logger: logger)
            do {
                try await connection.query(
                    "CREATE TABLE countersign_schema (version text PRIMARY KEY, applied_at timestamptz NOT NULL)", logger: logger)
                for statement in PostgresSchema.versions[0].statements + ["INSERT INTO countersign_schema VALUES ('0.1.0', now())"] + rows
                    + ["INSERT INTO user_applications (user_id, application_id, created_at) VALUES ('usr_old', 'legacy', now())"]
                {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.close()
            } catch {
                try? await connection.close()
                throw error
            }
        case .sqliteMemory:
            Issue.record("an upgrade needs a database that outlives its first opening")
        }
    }
}
