import CountersignCore
@testable import CountersignServer
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@Suite("PostgreSQL: statements prepared once per connection, limited in time, and their rows read as stored", .enabled(if: TestDatabase.postgresURL != nil))
struct PostgresStatementsTests {
    @Test("a statement runs prepared under one name on its connection, and runs again under the same name")
    func preparedOnceAndReused() async throws {
        try await TestServer.run { server in
            let sql = server.sql
            let listing = "SELECT name, statement FROM pg_prepared_statements"
            // More runs than the pools have connections, so that some connection runs it again.
            for _ in 0..<12 {
                let prepared = try await sql.raw(TestSQL(stringLiteral: listing)).all().map {
                    (name: try $0.decode(column: "name", as: String.self), statement: try $0.decode(column: "statement", as: String.self))
                }
                let listings = prepared.filter { $0.statement == listing }
                #expect(listings.count == 1, "the listing itself is prepared, once, on the connection it runs on: \(prepared)")
                #expect(listings.allSatisfy { $0.name.hasPrefix("countersign_") })
            }
        }
    }

    @Test("a statement that failed to prepare (its table did not exist yet) runs once its table exists, on every connection")
    func failedPreparationIsPreparedAgain() async throws {
        try await TestServer.run { server in
            let sql = server.sql
            let reading: TestSQL = "SELECT count(*) AS rows FROM added_later"
            // More runs than the pools have connections, so that it fails on each of them.
            for _ in 0..<12 {
                await #expect(throws: (any Error).self) { try await sql.raw(reading).run() }
            }
            try await sql.raw("CREATE TABLE added_later (id TEXT PRIMARY KEY)").run()
            for _ in 0..<12 {
                #expect(try await sql.raw(reading).first()?.decode(column: "rows", as: Int.self) == 0)
            }
        }
    }

    @Test("past the names there are, a text seen for the first time runs unprepared, and answers")
    func unpreparedPastTheLimit() async throws {
        try await TestServer.run { server in
            let sql = server.sql
            // As many texts as there are names, each differing by a literal (the server's own took some already).
            for number in 0..<PreparedStatements.limit {
                #expect(try await sql.raw("SELECT \(unsafeRaw: String(number)) AS n").first()?.decode(column: "n", as: Int.self) == number)
            }
            let listing = "SELECT statement FROM pg_prepared_statements WHERE name LIKE 'countersign%'"
            let prepared = try await sql.raw(TestSQL(stringLiteral: listing)).all().map { try $0.decode(column: "statement", as: String.self) }
            #expect(!prepared.isEmpty, "the connection holds the statements it prepared before")
            #expect(!prepared.contains(listing), "the listing itself came past the limit, so it is not prepared")
            #expect(prepared.count <= PreparedStatements.limit)
        }
    }

    @Test("every kind of value the stores keep reads back as stored: bigint, text, boolean, timestamptz and NULL, a string enum by its raw value, and a type no store keeps is not read as NULL")
    func everyKindOfValueReadsBack() async throws {
        try await TestServer.run { server in
            let sql = server.sql
            let row = try #require(try await sql.raw("""
                SELECT 9007199254740993::bigint AS i, 'é z' AS t, true AS b, TIMESTAMPTZ '2026-11-27 10:00:00.25+00' AS d,
                    NULL::text AS n, 'revoked' AS s, POINT(1, 2) AS p
                """).first())
            #expect(row.columns == ["i", "t", "b", "d", "n", "s", "p"])
            #expect(try row.decode(column: "i", as: Int.self) == 9_007_199_254_740_993)
            #expect(try row.decode(column: "t", as: String.self) == "é z")
            #expect(try row.decode(column: "b", as: Bool.self))
            #expect(try row.decode(column: "d", as: Date.self) == Date(timeIntervalSince1970: 1_795_773_600.25))
            #expect(try row.isNull("n"))
            #expect(try !row.isNull("t"))
            #expect(try row.decode(column: "n", as: String?.self) == nil)
            #expect(try row.decode(column: "s", as: CredentialStatus.self) == .revoked)
            #expect(throws: (any Error).self) { try row.decode(column: "missing", as: String.self) }
            #expect(throws: (any Error).self) { try row.decode(column: "t", as: Int.self) }
            // A type no store keeps is not taken for NULL.
            #expect(throws: DatabaseRowError.self) { try row.decode(column: "p", as: String?.self) }
        }
    }

    @Test("a statement stuck behind another session's lock is cancelled: the call is refused 503 with nothing kept, and the next is served")
    func stuckStatementIsCancelled() async throws {
        try await TestServer.run { server in
            let storage = server.app.storage
            let start: @Sendable () async throws -> (status: HTTPStatus, body: JSONValue) = {
                let reply = try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web"])
                return (reply.status, reply.body)
            }
            // Another session holds the clients table, which a journey start reads, until it is released.
            let (taken, lockTaken) = AsyncStream.makeStream(of: Void.self)
            let (released, release) = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                // Finished however the lock went, so that a failure here fails the test instead of hanging it.
                defer { lockTaken.finish() }
                try await storage.transaction { holder in
                    try await holder.db.raw("LOCK TABLE clients IN ACCESS EXCLUSIVE MODE").run()
                    lockTaken.finish()
                    for await _ in released {}
                }
            }
            for await _ in taken {}
            // Without a limit the start would wait as long as the lock is held: after three limits it is
            // released, the start goes through, and this test fails.
            let limit = DatabaseSetup.postgresStatementLimit.nanoseconds / 1_000_000_000
            let releaseLate = Task {
                try await Task.sleep(for: .seconds(limit * 3))
                release.finish()
            }
            let refused = try await start()
            releaseLate.cancel()
            release.finish()
            try await holder.value

            #expect(refused.status == .serviceUnavailable)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.databaseUnavailable), "\(refused.body)")
            let kept = try await storage.db.raw("SELECT count(*) AS runs FROM interactions").first()?.decode(column: "runs", as: Int.self)
            #expect(kept == 0, "nothing of the refused start was kept")

            let served = try await start()
            #expect(served.status == .ok, "\(served.body)")
        }
    }
}
