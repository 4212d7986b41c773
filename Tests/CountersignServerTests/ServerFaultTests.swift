import CountersignCore
import Foundation
import Testing

@Suite("The server's own failures, told from the client's")
struct ServerFaultTests {
    /// A decoding error is the client's only when its body did not decode. A stored state the server
    /// cannot read is the server's fault: a 500, never a `400 client_response_not_valid` that sends the
    /// client looking for a mistake it did not make.
    @Test("a stored run the server cannot read answers 500 internal_error; a body of the wrong shape is still 400")
    func unreadableStoredRun() async throws {
        try await TestServer.run { server in
            let started = try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web"])
            let id = try #require(started.body["interaction_id"]?.stringValue)
            let token = try #require(started.body["interaction_token"]?.stringValue)
            // A run's state that decodes as JSON but not as a run's state.
            let sql = try #require(server.app.countersignSQL)
            try await sql.raw("UPDATE interactions SET state = '{}' WHERE id = \(bind: id)").run()
            let failed = try await server.send(
                .POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": ["email": "ada@example.com"]], bearer: token)
            #expect(failed.status == .internalServerError)
            #expect(failed.body["error"]?["code"] == .string(ErrorCode.internalError))

            let malformed = try await server.admin(.POST, "applications", json: ["name": 5])
            #expect(malformed.status == .badRequest)
            #expect(malformed.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
        }
    }
}
