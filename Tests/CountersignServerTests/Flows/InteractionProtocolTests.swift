import CountersignCore
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@Suite("Orchestration API: tokens, expiry and refusals")
struct InteractionProtocolTests {
    /// Starts `mobile_registration_by_email` over raw HTTP; returns the interaction id and token.
    func startRegistration(_ server: TestServer) async throws -> (id: String, token: String, body: JSONValue) {
        let started = try await server.send(.POST, "/v1/journeys/mobile_registration_by_email/start", json: ["client_id": "demo-native"])
        #expect(started.status == .ok)
        return (
            try #require(started.body["interaction_id"]?.stringValue), try #require(started.body["interaction_token"]?.stringValue),
            started.body
        )
    }

    func submitPath(_ id: String) -> String { "/v1/interactions/\(id)/submit" }

    /// What a refused request must leave unchanged: the users and the interaction's ability to go on.
    func assertUnchanged(_ server: TestServer, id: String, token: String) async throws {
        #expect(try await server.admin(.GET, "users").body.arrayValue?.isEmpty == true)
        let next = try await server.send(
            .POST, submitPath(id), json: ["option": "client_input", "data": ["email": "ok@example.com"]], bearer: token)
        #expect(next.status == .ok)
        #expect(next.body["journey_step_id"] == .string(JourneyStepID.mobileBiometricsRegistration))
    }

    @Test("the start response follows the wire format")
    func startShape() async throws {
        try await TestServer.run { server in
            let (id, token, body) = try await startRegistration(server)
            #expect(id.hasPrefix("int_"))
            #expect(token.count >= 22)
            #expect(body["journey_id"] == "mobile_registration_by_email")
            #expect(body["journey_step_id"] == "email_form")
            #expect(body["data"]?["form_id"] == "email_form")
            #expect(body["data"]?["schema"]?["required"] == ["email"])
            #expect(body["client_response_options"]?["client_input"]?["type"] == "client_input")
            #expect(body["client_response_options"]?["cancel"]?["type"] == "cancel")
        }
    }

    @Test("an unknown journey is 404 not_found")
    func unknownJourney() async throws {
        try await TestServer.run { server in
            let response = try await server.send(.POST, "/v1/journeys/no_such_journey/start", json: ["client_id": "demo-native"])
            #expect(response.status == .notFound)
            #expect(response.body["error"]?["code"] == "not_found")
        }
    }

    @Test("an unknown client is refused")
    func unknownClient() async throws {
        try await TestServer.run { server in
            let response = try await server.send(.POST, "/v1/journeys/mobile_login/start", json: ["client_id": "nobody"])
            #expect(response.status == .unauthorized)
            #expect(response.body["error"]?["code"] == "invalid_client")
        }
    }

    @Test("approval data breaking the rules is refused at start")
    func badApprovalDataAtStart() async throws {
        try await TestServer.run { server in
            let response = try await server.send(
                .POST, "/v1/journeys/mobile_login/start",
                json: ["client_id": "demo-native", "approval_data": ["payee": "<script>"]])
            #expect(response.status == .badRequest)
            #expect(response.body["error"]?["code"] == .string(ErrorCode.invalidApprovalData))
            #expect(response.body["error"]?["message"]?.stringValue?.contains("payee") == true)
        }
    }

    @Test("an unknown interaction is 404")
    func unknownInteraction() async throws {
        try await TestServer.run { server in
            let response = try await server.send(.POST, submitPath("int_nope"), json: ["option": "cancel"], bearer: "x")
            #expect(response.status == .notFound)
        }
    }

    @Test("a missing, wrong or previous interaction token is 401 and changes nothing", arguments: ["missing", "wrong", "previous"])
    func badInteractionToken(kind: String) async throws {
        try await TestServer.run { server in
            let (id, firstToken, _) = try await startRegistration(server)
            let moved = try await server.send(
                .POST, submitPath(id), json: ["option": "client_input", "data": ["email": "a@example.com"]], bearer: firstToken)
            let currentToken = try #require(moved.body["interaction_token"]?.stringValue)
            #expect(currentToken != firstToken)

            let bearer: String? = switch kind {
            case "wrong": "itk_" + String(repeating: "A", count: 22)
            case "previous": firstToken
            default: nil
            }
            let refused = try await server.send(.POST, submitPath(id), json: ["option": "cancel"], bearer: bearer)
            #expect(refused.status == .unauthorized)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.invalidToken))
            // The current token still works: the refused call changed nothing.
            let next = try await server.send(.POST, submitPath(id), json: ["option": "cancel"], bearer: currentToken)
            #expect(next.status == .ok)
            #expect(next.body["journey_step_id"] == .string(JourneyStepID.rejection))
        }
    }

    @Test("an expired interaction is 410 expired")
    func expiredInteraction() async throws {
        try await TestServer.run { server in
            let (id, token, _) = try await startRegistration(server)
            server.clock.advance(by: 601)
            let response = try await server.send(
                .POST, submitPath(id), json: ["option": "client_input", "data": ["email": "a@example.com"]], bearer: token)
            #expect(response.status == .gone)
            #expect(response.body["error"]?["code"] == .string(ErrorCode.expired))
        }
    }

    @Test("a finished interaction is 410, but to the token whose call ended it, which is answered the same again until the interaction's expiry")
    func finishedInteraction() async throws {
        try await TestServer.run { server in
            let (id, token, _) = try await startRegistration(server)
            let cancelled = try await server.send(.POST, submitPath(id), json: ["option": "cancel"], bearer: token)
            #expect(cancelled.body["interaction_token"] == nil)
            #expect(cancelled.body["journey_step_id"] == .string(JourneyStepID.rejection))
            let other = try await server.send(.POST, submitPath(id), json: ["option": "cancel"], bearer: "itk_\(String(repeating: "a", count: 43))")
            #expect(other.status == .gone)
            let again = try await server.send(.POST, submitPath(id), json: ["option": "client_input", "data": [:]], bearer: token)
            #expect(again.status == .ok)
            #expect(again.body == cancelled.body)
            server.clock.advance(by: 590)
            #expect(try await server.send(.POST, submitPath(id), json: ["option": "cancel"], bearer: token).body == cancelled.body)
            server.clock.advance(by: 11)
            let late = try await server.send(.POST, submitPath(id), json: ["option": "cancel"], bearer: token)
            #expect(late.status == .gone)
            #expect(late.body["error"]?["code"] == .string(ErrorCode.expired))
        }
    }

    @Test("malformed bodies are 400 client_response_not_valid and change nothing", arguments: [
        "{not json", "[]", "{\"data\": {}}", "{\"option\": 5}", "",
    ])
    func malformedBody(body: String) async throws {
        try await TestServer.run { server in
            let (id, token, _) = try await startRegistration(server)
            let response = try await server.send(.POST, submitPath(id), rawBody: body, bearer: token)
            #expect(response.status == .badRequest)
            #expect(response.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            try await assertUnchanged(server, id: id, token: token)
        }
    }

    @Test("a missing or invalid form field is 400 and changes nothing", arguments: [
        JSONValue.object([:]), ["email": ""], ["email": 42], ["email": "not-an-email"], "just a string",
    ])
    func badFormAnswer(data: JSONValue) async throws {
        try await TestServer.run { server in
            let (id, token, _) = try await startRegistration(server)
            let response = try await server.send(.POST, submitPath(id), json: ["option": "client_input", "data": data], bearer: token)
            #expect(response.status == .badRequest)
            #expect(response.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            try await assertUnchanged(server, id: id, token: token)
        }
    }

    @Test("an option the step does not offer is 400 and changes nothing")
    func optionNotOffered() async throws {
        try await TestServer.run { server in
            let (id, token, _) = try await startRegistration(server)
            let response = try await server.send(.POST, submitPath(id), json: ["option": "resend"], bearer: token)
            #expect(response.status == .badRequest)
            #expect(response.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            try await assertUnchanged(server, id: id, token: token)
        }
    }

    @Test("a malformed start body is 400")
    func malformedStart() async throws {
        try await TestServer.run { server in
            let response = try await server.send(.POST, "/v1/journeys/mobile_login/start", rawBody: "{\"client\": 1}")
            #expect(response.status == .badRequest)
            #expect(response.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
        }
    }

    @Test("health check answers")
    func health() async throws {
        try await TestServer.run { server in
            let response = try await server.send(.GET, "/healthz")
            #expect(response.status == .ok)
            #expect(response.body["status"] == "ok")
        }
    }
}
