import CountersignClient
import CountersignCore
@testable import CountersignServer
import Foundation
import Testing

@Suite("Removing expired records")
struct ExpirySweepTests {
    /// A server that keeps expired records for a minute and sweeps often.
    static func run(_ body: (TestServer) async throws -> Void) async throws {
        try await TestServer.run(adjust: { configuration in
            configuration.interactionLifetime = 300
            configuration.recordRetention = 60
            // The sweeps the tests await (`sweep`), and none of the loop's between them.
            configuration.sweepInterval = 3600
        }, body)
    }

    @Test("security events, which a stranger can add, are kept for their retention and then removed")
    func securityEventsGo() async throws {
        try await TestServer.run(adjust: { $0.securityEventRetention = 120; $0.sweepInterval = 3600 }) { server in
            #expect(try await server.send(.GET, "/admin/v1/applications", bearer: "a-guess").status == .unauthorized)
            let recorded = try await server.count("security_events")
            #expect(recorded > 0)
            server.clock.advance(by: 100)
            try await server.sweep()
            #expect(try await server.count("security_events") == recorded, "kept for their retention")
            server.clock.advance(by: 21)
            try await server.sweep()
            #expect(try await server.count("security_events") == 0, "the security events were removed")
        }
    }

    @Test("a backend client's request is kept for the retention after its expiry, then removed")
    func cibaRequestsGo() async throws {
        try await Self.run { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            let userID = try #require(try await server.sql.raw("SELECT id FROM users").first(decoding: [String: String].self)?["id"])
            let now = server.clock.now()
            try await server.sql.raw("""
                INSERT INTO ciba_requests (id, auth_req_hash, client_id, user_id, approval_id, scope, poll_interval, expires_at, created_at)
                VALUES ('cib_1', 'hash', 'demo-web', \(bind: userID), 'apr_1', 'openid', 5, \(bind: now.addingTimeInterval(300)), \(bind: now))
                """).run()
            server.clock.advance(by: 300 + 59)
            try await server.sweep()
            #expect(try await server.count("ciba_requests") == 1, "kept for the retention")
            server.clock.advance(by: 2)
            try await server.sweep()
            #expect(try await server.count("ciba_requests") == 0, "removed after the retention")
        }
    }

    @Test("interactions that never reached a user are removed at expiry, without waiting for the retention")
    func anonymousInteractionsGoAtExpiry() async throws {
        try await Self.run { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            for _ in 0..<3 {
                #expect(try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web"]).status == .ok)
            }
            #expect(try await server.count("interactions") == 4)
            server.clock.advance(by: 301)
            try await server.sweep()
            #expect(try await server.count("interactions") == 1, "the anonymous interactions were removed")
            server.clock.advance(by: 61)
            try await server.sweep()
            #expect(try await server.count("interactions") == 0, "the registration's interaction was removed after the retention")
        }
    }

    @Test("a run's last answer is let go of once the interaction would have expired; the run's row stays for the retention")
    func idempotentReplaysGo() async throws {
        try await Self.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.signIn(email: "ada@example.com")
            try await phone.approve()
            #expect(try await browser.poll().journeyStepID == JourneyStepID.success)
            // The phone's registration, its approval and the browser's sign-in.
            #expect(try await server.count("idempotent_replays") == 3)
            server.clock.advance(by: 290)
            try await server.sweep()
            #expect(try await server.count("idempotent_replays") == 3, "kept until the interactions would have expired")
            server.clock.advance(by: 11)
            try await server.sweep()
            #expect(try await server.count("idempotent_replays") == 0, "the answers were let go of")
            #expect(try await server.count("interactions") == 3)
        }
    }

    @Test("a run that never reached a user and ended in its last seconds keeps its answer past its expiry, at least 90 seconds; its row goes with it")
    func replayOutlivesExpiry() async throws {
        try await Self.run { server in
            let started = try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web"])
            let id = try #require(started.body["interaction_id"]?.stringValue)
            let token = try #require(started.body["interaction_token"]?.stringValue)
            server.clock.advance(by: 280)
            let cancelled = try await server.submit(id, "cancel", bearer: token)
            #expect(cancelled.body["journey_step_id"] == .string(JourneyStepID.rejection))

            // Expired, and anonymous: such rows go at expiry, but not while they keep an answer.
            server.clock.advance(by: 60)
            try await server.sweep()
            #expect(try await server.submit(id, "cancel", bearer: token).body == cancelled.body)
            server.clock.advance(by: 31)
            try await server.sweep()
            #expect(try await server.count("interactions") == 0, "the answer and its row went")
        }
    }

    @Test("a run of a known user that ended in its last seconds keeps its answer past the retention of its expiry; its row goes with it")
    func replayOutlivesRetention() async throws {
        try await Self.run { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            let (id, token) = try await server.waitingWebLogin(email: "ada@example.com")
            server.clock.advance(by: 280)
            let cancelled = try await server.submit(id, "cancel", bearer: token)
            #expect(cancelled.body["journey_step_id"] == .string(JourneyStepID.rejection))
            let interactions = try await server.count("interactions")

            // Expired for longer than the retention (60 s): such rows go, but not while they keep an answer.
            server.clock.advance(by: 85)
            try await server.sweep()
            #expect(try await server.submit(id, "cancel", bearer: token).body == cancelled.body)
            server.clock.advance(by: 6)
            try await server.sweep()
            #expect(try await server.count("idempotent_replays") == 0, "the answer went")
            #expect(try await server.count("interactions") < interactions, "and its row")
        }
    }

    @Test("expired approvals, their interactions and push records go after the retention; open ones and evidence stay")
    func removesAfterRetention() async throws {
        try await Self.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let signer = TestPhone(client: server.client())
            try await signer.register(email: "bob@example.com")
            let signing = try await signer.startSigning(as: "bob@example.com")
            let signed = try await signer.client.submitClientResponse(.clientInput, data: try await signer.signShown(signing, as: "bob@example.com"))
            #expect(signed.journeyStepID == JourneyStepID.success)
            let expiring = try await server.waitingWebLogin(email: "ada@example.com")
            try await eventually("the push was delivered") { try await server.count("push_deliveries") == 1 }
            #expect(try await phone.inbox().count == 1)
            #expect(try await server.count("approvals") == 1)
            #expect(try await server.count("used_device_signatures") > 0)

            // Expired, but within the retention: only the used device signatures (no longer fresh) go.
            server.clock.advance(by: 301)
            try await server.sweep()
            #expect(try await server.count("used_device_signatures") == 0, "used device signatures were removed")
            #expect(try await server.count("approvals") == 1)
            #expect(try await server.count("interactions") > 1)

            // A new sign-in now, still open when the first passes its retention.
            let open = TestBrowser(server)
            _ = try await open.signIn(email: "ada@example.com")
            try await eventually("the second push was delivered") { try await server.count("push_deliveries") == 2 }
            server.clock.advance(by: 61)
            try await server.sweep()
            #expect(try await server.count("approvals") == 1, "the expired approval was removed")
            let stats = try await server.admin(.GET, "stats")
            #expect(stats.status == .ok)
            #expect(stats.body["approvals_pending"] == 1)
            #expect(stats.body["approvals_stored"] == 1)
            try await server.sweep()
            #expect(try await server.count("interactions") == 1, "the expired interactions were removed")
            #expect(try await server.count("push_jobs") == 1)
            #expect(try await server.count("push_deliveries") == 1)
            let gone = try await server.send(
                .POST, "/v1/interactions/\(expiring.id)/submit", json: ["option": "client_input", "data": [:]], bearer: expiring.token)
            #expect(gone.status == .notFound)
            #expect(try await server.admin(.GET, "evidence").body["evidence"]?.arrayValue?.count == 1)

            // The open sign-in is untouched: still waiting for the phone.
            let stillWaiting = try await open.poll()
            #expect(stillWaiting.journeyStepID == JourneyStepID.mobileApproveAuthentication)
            #expect(stillWaiting.error == nil)
        }
    }

    @Test("more expired approvals than one batch are all removed")
    func removesManyBatches() async throws {
        try await Self.run { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            let sql = server.sql
            let browser = TestBrowser(server)
            _ = try await browser.signIn(email: "ada@example.com")
            // Copies of the real approval, enough for several batches.
            let copies = 1_200
            for batch in stride(from: 0, to: copies, by: 200) {
                let values = (batch..<batch + 200).map { "('apr_copy_\($0)')" }.joined(separator: ", ")
                try await sql.raw("""
                    WITH copy(id) AS (VALUES \(unsafeRaw: values))
                    INSERT INTO approvals (id, application_id, web_client_id, native_client_id, web_interaction_id, web_journey_id,
                        mobile_journey_id, user_id, device_id, status, amr, otp_attempts_left, expires_at, created_at, source_digest)
                    SELECT copy.id, application_id, web_client_id, native_client_id, web_interaction_id, web_journey_id,
                        mobile_journey_id, user_id, device_id, status, amr, otp_attempts_left, expires_at, created_at, source_digest
                    FROM approvals, copy
                    WHERE approvals.id NOT LIKE 'apr_copy_%'
                    """).run()
            }
            #expect(try await server.count("approvals") == copies + 1)
            server.clock.advance(by: 301 + 61)
            try await server.sweep()
            #expect(try await server.count("approvals") == 0, "every expired approval was removed")
        }
    }
}

extension TestServer {
    /// The number of rows in `table`.
    func count(_ table: String) async throws -> Int {
        let sql = app.storage.db
        let row = try #require(try await sql.raw("SELECT COUNT(*) AS n FROM \(ident: table)").first())
        return try row.decode(column: "n", as: Int.self)
    }
}

extension TestServer {
    /// Runs one expiry sweep now and returns once it is done.
    func sweep() async throws {
        _ = try await app.sweeper.sweep()
    }
}
