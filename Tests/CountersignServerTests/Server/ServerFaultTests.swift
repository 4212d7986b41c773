@testable import CountersignServer
import CountersignCore
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Testing

@Suite("The server's own failures, told from the client's")
struct ServerFaultTests {
    /// A decoding error is the client's only when its body did not decode. A stored state the server
    /// cannot read is the server's fault: a 500, never a `400 client_response_not_valid` that sends the
    /// client looking for a mistake it did not make.
    @Test("a stored run the server cannot read answers 500 internal_error; a body of the wrong shape is still 400")
    func unreadableStoredRun() async throws {
        try await TestServer.run { server in
            let (id, token) = try await startedRun(server)
            // A run's state that decodes as JSON but not as a run's state, saved as the run's next version (as
            // another instance would save it), so that this instance reads the row rather than answering from
            // the run as it saved it itself.
            let sql = server.sql
            try await sql.raw("UPDATE interactions SET state = '{}', version = version + 1 WHERE id = \(bind: id)").run()
            let failed = try await submitEmail(server, id, token)
            #expect(failed.status == .internalServerError)
            #expect(failed.body["error"]?["code"] == .string(ErrorCode.internalError))

            let malformed = try await server.admin(.POST, "applications", json: ["name": 5])
            #expect(malformed.status == .badRequest)
            #expect(malformed.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
        }
    }

    /// A column that does not hold what its record says is logged by name, never by value: the value
    /// might be a token's hash or a push token.
    @Test("a stored value of the wrong type is logged as the column that failed, without the value, on either database")
    func unreadableValueLoggedWithoutIt() async throws {
        let store = LogStore()
        try await TestServer.run(logger: Logger(label: "countersign.tests") { _ in CapturingLogHandler(store: store) }) { server in
            let (id, token) = try await startedRun(server)
            let sql = server.sql
            // SQLite keeps text in an integer column as text; PostgreSQL needs the column's type changed.
            if sql.database == .postgresql {
                try await sql.raw("ALTER TABLE interactions ALTER COLUMN version TYPE TEXT").run()
            }
            let marker = "marker-9f27c1"
            try await sql.raw("UPDATE interactions SET version = \(bind: marker) WHERE id = \(bind: id)").run()
            // The browser's wait reads the row whoever saved it (a submit would first try the run as this
            // instance saved it, whose save cannot match the damaged row).
            let failed = try await server.send(.GET, "/v1/interactions/\(id)/events", bearer: token)
            #expect(failed.status == .internalServerError)
            let lines = store.lines.withLock { $0 }
            #expect(lines.contains { $0.contains("request failed") && $0.contains("could not be decoded") && $0.contains("'version'") })
            #expect(!lines.contains { $0.contains(marker) })
        }
    }

    private func startedRun(_ server: TestServer) async throws -> (id: String, token: String) {
        let started = try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web"])
        return (try #require(started.body["interaction_id"]?.stringValue), try #require(started.body["interaction_token"]?.stringValue))
    }

    private func submitEmail(_ server: TestServer, _ id: String, _ token: String) async throws -> (status: HTTPStatus, body: JSONValue, headers: HTTPHeaders) {
        try await server.send(
            .POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": ["email": "ada@example.com"]], bearer: token)
    }
}
