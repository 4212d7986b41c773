import CountersignCore
@testable import CountersignServer
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// An instance answers a submit from the run as it saved it last, without reading the row
/// (`RunCache`). These attack that: the row has moved on without this instance, or several calls
/// race with one token, and the instance must answer as the database's row says.
@Suite("Submits answered from the run an instance saved last")
struct IdempotentReplayTests {
    private let protocolTests = InteractionProtocolTests()

    @Test("a token the run has moved past elsewhere is refused by the instance that kept the run with that token; nothing changes, and the new token goes on")
    func tokenMovedPastElsewhere() async throws {
        try await TestServer.run { server in
            let (id, kept, _) = try await protocolTests.startRegistration(server)
            // Another instance saves the run's next version, with a token of its own.
            let current = SecureRandom.identifier(prefix: "itk")
            let sql = server.sql
            try await sql.raw("""
                UPDATE interactions SET token_hash = \(bind: SecretDigest.hex(current)), version = version + 1 WHERE id = \(bind: id)
                """).run()

            let refused = try await server.send(
                .POST, protocolTests.submitPath(id), json: ["option": "client_input", "data": ["email": "a@example.com"]], bearer: kept)
            #expect(refused.status == .unauthorized)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.invalidToken))
            // A body the step would refuse is still refused for its token first, as the row says.
            let malformed = try await server.send(.POST, protocolTests.submitPath(id), rawBody: "{not json", bearer: kept)
            #expect(malformed.status == .unauthorized)
            try await protocolTests.assertUnchanged(server, id: id, token: current)
        }
    }

    @Test("one token sent eight times at once moves the run once: one answer, seven refusals, one user")
    func oneTokenAtOnce() async throws {
        try await TestServer.run { server in
            let (id, token, _) = try await protocolTests.startRegistration(server)
            let statuses = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await server.send(
                            .POST, protocolTests.submitPath(id),
                            json: ["option": "client_input", "data": ["email": .string("racer\(index)@example.com")]], bearer: token
                        ).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .ok }.count == 1)
            #expect(statuses.filter { $0 == .unauthorized }.count == 7)
            #expect(try await server.admin(.GET, "users").body.arrayValue?.count == 1)
        }
    }

    @Test("a browser's wait reads its interaction with how its approval stands: pending, settled, past its expiry, vanished, or a decoy's")
    func interactionReadWithItsApproval() async throws {
        try await TestServer.run { server in
            let (_, payload) = try await MobileApproveStartTests().pendingApproval(server)
            let approvalID = try #require(payload["approval_id"])
            let sql = server.sql
            let interactions = server.app.storage.interactions
            let webInteractionID = try #require(
                try await sql.raw("SELECT web_interaction_id FROM approvals WHERE id = \(bind: approvalID)").first()?
                    .decode(column: "web_interaction_id", as: String.self))
            let now = server.clock.now()

            let read = try #require(try await interactions.find(webInteractionID, withStatusOf: approvalID, at: now))
            #expect(read.record.id == webInteractionID)
            #expect(read.approvalStatus == .pending)
            #expect(try await interactions.find(webInteractionID, withStatusOf: approvalID, at: now.addingTimeInterval(3600))?.approvalStatus == .expired)
            #expect(try await interactions.find(webInteractionID, withStatusOf: "apr_vanished", at: now)?.approvalStatus == .expired)
            #expect(try await interactions.find(webInteractionID, withStatusOf: "dcy_vanished", at: now)?.approvalStatus == .expired)
            #expect(try await interactions.find("int_vanished", withStatusOf: approvalID, at: now) == nil)
            try await sql.raw("UPDATE approvals SET status = 'approved' WHERE id = \(bind: approvalID)").run()
            #expect(try await interactions.find(webInteractionID, withStatusOf: approvalID, at: now)?.approvalStatus == .approved)
        }
    }

    @Test("a refusal worked out on a cached run is the answer only while that run is the row: a used token of a person in backoff is 401 and records nothing; a current one is 429 and recorded")
    func refusalOnCachedRun() async throws {
        try await TestServer.run { server in
            let fatigue = PushFatigueTests()
            for email in ["ada@example.com", "bob@example.com"] {
                _ = try await RegisteredPhone.register(server, email: email)
                // An unanswered request: the person now waits out a backoff.
                #expect(try await fatigue.startSignIn(server, email: email).status == 200)
            }
            func rateLimitEvents() async throws -> [JSONValue] {
                try await server.admin(.GET, "security-events?kind=rate_limited").body["security_events"]?.arrayValue ?? []
            }
            func start() async throws -> (id: String, token: String) {
                let started = try await server.send(.POST, "/v1/journeys/web_login_biometric_only/start", json: ["client_id": "demo-web"])
                return (try #require(started.body["interaction_id"]?.stringValue), try #require(started.body["interaction_token"]?.stringValue))
            }
            func submit(_ id: String, _ email: String, bearer: String) async throws -> HTTPStatus {
                try await server.send(
                    .POST, protocolTests.submitPath(id), json: ["option": "client_input", "data": ["email": .string(email)]], bearer: bearer
                ).status
            }

            // Worked out on the run this instance kept, which is still the row: the refusal stands, recorded.
            let ada = try await start()
            #expect(try await submit(ada.id, "ada@example.com", bearer: ada.token) == .tooManyRequests)
            #expect(try await rateLimitEvents().count == 1)

            // Another instance has moved Bob's run on: the cached run's token is a used one, refused as the row says.
            let bob = try await start()
            let current = SecureRandom.identifier(prefix: "itk")
            try await server.sql.raw("""
                UPDATE interactions SET token_hash = \(bind: SecretDigest.hex(current)), version = version + 1 WHERE id = \(bind: bob.id)
                """).run()
            #expect(try await submit(bob.id, "bob@example.com", bearer: bob.token) == .unauthorized)
            #expect(try await rateLimitEvents().count == 1)
            #expect(try await submit(bob.id, "bob@example.com", bearer: current) == .tooManyRequests)
            #expect(try await rateLimitEvents().count == 2)
        }
    }
}

