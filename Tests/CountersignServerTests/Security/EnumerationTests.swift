import CountersignClient
import CountersignCore
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// A stranger with only the public client id types emails into the web sign-in to learn which have an
/// account. Every answer they can see must be the same for a registered email as for one with no phone.
@Suite("Enumeration: a registered email and one with no phone look alike to a browser")
struct EnumerationTests {
    /// What an answer shows, without the values that differ on every call anyway (ids, tokens, times, the
    /// code's digits): the status, the step, the keys and kinds of every member, and the push status.
    static func shape(_ answer: (status: HTTPStatus, body: JSONValue, headers: HTTPHeaders)) -> String {
        func shape(_ value: JSONValue, key: String?) -> String {
            switch value {
            case .object(let members):
                return "{" + members.keys.sorted().map { "\($0): \(shape(members[$0]!, key: $0))" }.joined(separator: ", ") + "}"
            case .array(let items): return "[" + items.map { shape($0, key: nil) }.joined(separator: ", ") + "]"
            case .string(let text):
                // These name the step and what it is waiting for; the rest are ids, tokens, times and codes.
                let telling = ["journey_step_id", "push_status", "code", "type", "reason", "status"]
                return key.map(telling.contains) == true ? text : "string(\(text.count))"
            default: return "\(value)"
            }
        }
        return "\(answer.status.code) \(answer.headers.first(name: "Retry-After") ?? "-") \(shape(answer.body, key: nil))"
    }

    /// Starts `web_login` (number matching, as shipped) through `client` and submits `email`.
    static func signIn(_ server: TestServer, email: String, client: String = "demo-web") async throws
        -> (id: String, token: String?, answer: (status: HTTPStatus, body: JSONValue, headers: HTTPHeaders))
    {
        let started = try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": .string(client)])
        let id = try #require(started.body["interaction_id"]?.stringValue)
        let answer = try await server.send(
            .POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": ["email": .string(email)]],
            bearer: started.body["interaction_token"]?.stringValue)
        return (id, answer.body["interaction_token"]?.stringValue, answer)
    }

    static func submit(_ server: TestServer, _ id: String, token: String?, option: String = "client_input") async throws
        -> (status: HTTPStatus, body: JSONValue, headers: HTTPHeaders)
    {
        try await server.send(.POST, "/v1/interactions/\(id)/submit", json: ["option": .string(option), "data": [:]], bearer: token)
    }

    /// Ada has a phone; Bob had one and it was revoked; nobody@ was never registered.
    static let emails = ["ada@example.com", "bob@example.com", "nobody@example.com"]

    /// Expects the revoked and the unknown email to have seen exactly what the registered one saw.
    static func expectAlike(_ seen: [String: [String]]) {
        #expect(seen["bob@example.com"] == seen["ada@example.com"])
        #expect(seen["nobody@example.com"] == seen["ada@example.com"])
    }

    /// Runs `steps` for each email in turn, an hour apart (each starts from a clean slate of time), and
    /// expects the three to see alike; returns what the registered one saw.
    @discardableResult
    static func eachAlike(_ server: TestServer, _ steps: (String) async throws -> [String]) async throws -> [String] {
        var seen: [String: [String]] = [:]
        for email in emails {
            seen[email] = try await steps(email)
            server.clock.advance(by: 3600)
        }
        expectAlike(seen)
        return seen["ada@example.com"] ?? []
    }

    static func registerAdaAndBob(_ server: TestServer) async throws {
        _ = try await RegisteredPhone.register(server, email: "ada@example.com")
        let bob = try await RegisteredPhone.register(server, email: "bob@example.com")
        #expect(try await server.admin(.POST, "devices/\(bob.deviceID)/revoke").status == .ok)
    }

    @Test("the waiting step, its polls, a resend and its expiry read the same for a registered email, a revoked one and an unknown one")
    func sameAnswers() async throws {
        try await TestServer.run { server in
            try await Self.registerAdaAndBob(server)
            var seen: [String: [String]] = [:]
            var waiting: [String: (id: String, token: String?)] = [:]
            for email in Self.emails {
                let (id, token, answer) = try await Self.signIn(server, email: email)
                #expect(answer.body["journey_step_id"] == .string(JourneyStepID.mobileApproveAuthentication))
                #expect(answer.body["data"]?["otp"]?.stringValue?.count == 6, "the browser shows a code to type on the phone")
                seen[email] = [Self.shape(answer)]
                waiting[email] = (id, token)
            }
            /// Submits for `email`'s browser, which goes on with the token each answer hands it.
            func submit(_ email: String, option: String = "client_input") async throws -> (status: HTTPStatus, body: JSONValue, headers: HTTPHeaders) {
                let (id, token) = try #require(waiting[email])
                let answer = try await Self.submit(server, id, token: token, option: option)
                waiting[email] = (id, answer.body["interaction_token"]?.stringValue ?? token)
                seen[email]!.append(Self.shape(answer))
                return answer
            }
            // A poll at once is told to slow down; one after the interval, that the push went out; a
            // resend, past its own interval, is taken.
            for email in Self.emails { _ = try await submit(email) }
            server.clock.advance(by: 10)
            for email in Self.emails {
                #expect(try await submit(email).body["data"]?["push_status"] == "sent")
                #expect(try await submit(email, option: "resend").body["error"] == nil)
            }
            // Past the five minutes, every one ends as an unanswered request does.
            server.clock.advance(by: 300)
            for email in Self.emails {
                let ended = try await submit(email)
                #expect(ended.body["journey_step_id"] == .string(JourneyStepID.rejection))
                #expect(ended.body["data"]?["reason"] == .string(ErrorCode.expired))
            }
            Self.expectAlike(seen)
            // Nothing was pushed for the two without a phone, and nothing about them was stored in clear;
            // the operator sees them counted apart.
            #expect(try await server.count("approvals") == 1)
            let figures = try await server.scrapeMetrics()
            #expect(figures.value("countersign_approvals_created_total", [:]) == 1)
            #expect(figures.value("countersign_decoy_approvals_created_total", [:]) == 2)
            let stored = try await server.sql.raw("SELECT * FROM decoy_approvals").all()
            #expect(stored.count == 2)
            for row in stored {
                let digest = try row.decode(column: "subject_digest", as: String.self)
                #expect(!digest.contains("nobody") && !digest.contains("bob"))
            }
        }
    }

    @Test("the push-fatigue backoff and one pending request per person meet an unknown email as they meet a registered one")
    func sameLimits() async throws {
        try await TestServer.run { server in
            try await Self.registerAdaAndBob(server)
            try await Self.eachAlike(server) { email in
                let first = try await Self.signIn(server, email: email)
                let stream = try await server.openHeldEventsStream(first.id, token: first.token)
                // At once: refused for the backoff's 10 s, and nothing is created.
                let refused = try await Self.signIn(server, email: email)
                #expect(refused.answer.status == .tooManyRequests)
                #expect(refused.answer.body["error"]?["code"] == .string(ErrorCode.rateLimited))
                // After it: the new request replaces the one waiting, whose browser is told at once.
                server.clock.advance(by: 11)
                let second = try await Self.signIn(server, email: email)
                #expect(second.answer.body["journey_step_id"] == .string(JourneyStepID.mobileApproveAuthentication))
                let event = try await stream.value.body.string
                #expect(event.contains("event: approval\ndata: {\"status\":\"cancelled\"}"))
                let replaced = try await Self.submit(server, first.id, token: first.token)
                #expect(replaced.body["data"]?["reason"] == .string(ErrorCode.approvalSuperseded))
                // Two unanswered in a row: twice as long.
                let again = try await Self.signIn(server, email: email)
                #expect(again.answer.status == .tooManyRequests)
                #expect(again.answer.body["error"]?["code"] == .string(ErrorCode.rateLimited))
                #expect(again.answer.headers.first(name: "Retry-After") == "20")
                return [refused, second, again].map { Self.shape($0.answer) } + [event, Self.shape(replaced)]
            }
        }
    }

    @Test("a refused request runs the same statements for a registered email, a revoked one and an unknown one; repeated before its Retry-After, it is refused again having read nothing")
    func sameWorkWhenRefused() async throws {
        let store = LogStore()
        // No sweep while the test watches: it runs on its own schedule, whatever the requests.
        try await TestServer.run(adjust: { $0.sweepInterval = 3600 }, statementObserver: { sql in store.lines.withLock { $0.append(sql) } }) { server in
            try await Self.registerAdaAndBob(server)
            /// The statements the email's submit ran, in order (their SQL, never the values bound).
            func statements(of email: String) async throws -> (status: HTTPStatus, sql: [String]) {
                let started = try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web"])
                let id = try #require(started.body["interaction_id"]?.stringValue)
                store.lines.withLock { $0.removeAll() }
                let answer = try await server.send(
                    .POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": ["email": .string(email)]],
                    bearer: started.body["interaction_token"]?.stringValue)
                let sql = store.lines.withLock { lines in
                    // The push sender claims due pushes on its own schedule; the refusal's security event names
                    // the user when there is one, and is stored once a minute per user.
                    lines.filter { !$0.contains("SET lease") && !$0.contains("INSERT INTO \"security_events\"") }
                }
                return (answer.status, sql)
            }
            let runs = try await Self.eachAlike(server) { email in
                #expect(try await Self.signIn(server, email: email).answer.status == .ok)
                let refused = try await statements(of: email)
                #expect(refused.status == .tooManyRequests)
                server.clock.advance(by: 5)
                let repeated = try await statements(of: email)
                #expect(repeated.status == .tooManyRequests)
                return ["refused:"] + refused.sql + ["repeated:"] + repeated.sql
            }
            let repeated = runs.drop { $0 != "repeated:" }.dropFirst()
            #expect(runs.contains { $0.contains("decoy_approvals") }, "the first refusal reads the history")
            #expect(!repeated.contains { $0.contains("approvals") || $0.contains("devices") }, "a repeat reads neither")
        }
    }

    @Test("a browser that cancels its wait is answered alike, and its events stream ends alike")
    func sameCancel() async throws {
        try await TestServer.run { server in
            try await Self.registerAdaAndBob(server)
            let seenByAda = try await Self.eachAlike(server) { email in
                let waiting = try await Self.signIn(server, email: email)
                let stream = try await server.openHeldEventsStream(waiting.id, token: waiting.token)
                let cancelled = try await Self.submit(server, waiting.id, token: waiting.token, option: "cancel")
                #expect(cancelled.body["journey_step_id"] == .string(JourneyStepID.rejection))
                return [Self.shape(cancelled), try await stream.value.body.string]
            }
            #expect(seenByAda.last?.contains("{\"status\":\"cancelled\"}") == true)
        }
    }

    @Test("a request through another application's client counts in that application only, alike whether the identifier has a phone here or not")
    func historyPerApplication() async throws {
        try await ApplicationUsersTests.twoApplications { server, phone, _ in
            // Ada is a user of the demo application only: through the shop's client she gets a decoy.
            var seen: [[String]] = []
            for email in ["ada@example.com", "nobody@example.com"] {
                let throughShop = try await Self.signIn(server, email: email, client: "shop-web")
                #expect(throughShop.answer.body["journey_step_id"] == .string(JourneyStepID.mobileApproveAuthentication))
                let throughDemo = try await Self.signIn(server, email: email)
                #expect(throughDemo.answer.status == .ok, "the request through the shop does not hold back \(email)'s here")
                server.clock.advance(by: 4)  // past the polling interval
                let shopStillWaiting = try await Self.submit(server, throughShop.id, token: throughShop.token)
                #expect(shopStillWaiting.body["journey_step_id"] == .string(JourneyStepID.mobileApproveAuthentication))
                seen.append([Self.shape(throughShop.answer), Self.shape(throughDemo.answer), Self.shape(shopStillWaiting)])
                if email == "ada@example.com" {
                    #expect(try await phone.inbox().count == 1, "only her sign-in through the demo reached her phone")
                }
                server.clock.advance(by: 3600)
            }
            #expect(seen[0] == seen[1])
        }
    }

    /// A relying party may pass the identifier as it has it (no form lower-cases it). Were a decoy's history
    /// kept per spelling while a user's is one, a second spelling would tell an unknown email from a
    /// registered one.
    @Test("an email named again in other capitals meets the same one-pending limit, unknown or registered")
    func otherCapitalsOneHistory() async throws {
        try await TestServer.runWithFixtures { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            for email in ["ada@example.com", "nobody@example.com"] {
                func start(_ spelling: String) async throws -> HTTPStatus {
                    try await server.send(.POST, "/v1/journeys/web_login_by_param/start", json: [
                        "client_id": "demo-web", "additional_params": ["email": .string(spelling)],
                    ]).status
                }
                #expect(try await start(email) == .ok, "\(email)")
                #expect(try await start(email.uppercased()) == .tooManyRequests, "\(email) in capitals")
                server.clock.advance(by: 3600)
            }
        }
    }

    @Test("the push-fatigue limits read a long history's newest requests in the order they were made")
    func newestOfALongHistory() async throws {
        try await ApplicationUsersTests.twoApplications { server, phone, _ in
            /// A sign-in through `client`, a moment after the last.
            func signIn(through client: String = "demo-web") async throws -> (status: HTTPStatus, body: JSONValue, headers: HTTPHeaders) {
                server.clock.advance(by: 0.001)
                return try await Self.signIn(server, email: "ada@example.com", client: client).answer
            }
            func approve(_ waiting: (status: HTTPStatus, body: JSONValue, headers: HTTPHeaders)) async throws {
                #expect(waiting.status == .ok)
                try await phone.approve(otp: try #require(waiting.body["data"]?["otp"]?.stringValue))
            }
            // More approved requests than the limits look at (16), then two left unanswered: the newest.
            for _ in 0..<17 { try await approve(try await signIn()) }
            #expect(try await signIn().status == .ok)
            server.clock.advance(by: 10)
            #expect(try await signIn().status == .ok)
            #expect(try await signIn().headers.first(name: "Retry-After") == "20", "two unanswered in a row are the newest of nineteen")

            // After that backoff an approval, then one unanswered: it is newer than the approval.
            // (Within two minutes of the phone's clock, which signs its answers.)
            server.clock.advance(by: 21)
            try await approve(try await signIn())
            #expect(try await signIn().status == .ok)
            let held = try await signIn()
            #expect(held.status == .tooManyRequests, "the unanswered request is the newest")
            #expect(held.headers.first(name: "Retry-After") == "10")
        }
    }

    @Test("decoys are kept as long as approvals (the push-fatigue limits read both), then removed with them; the statistics count them apart")
    func decoysAreSwept() async throws {
        try await TestServer.run(adjust: { configuration in
            configuration.interactionLifetime = 300
            configuration.recordRetention = 7200
            configuration.sweepInterval = 0.02
        }) { server in
            _ = try await Self.signIn(server, email: "nobody@example.com")
            #expect(try await server.count("decoy_approvals") == 1)
            let waiting = try await server.stats()
            #expect(waiting["decoy_approvals_pending"] == 1)
            #expect(waiting["decoy_approvals_stored"] == 1)
            #expect(waiting["approvals_pending"] == 0)
            server.clock.advance(by: 301 + 3600)
            // A sweep ran past the expiry: it removed the interaction, which never reached a user.
            try await eventually("the interaction was removed") { try await server.count("interactions") == 0 }
            #expect(try await server.count("decoy_approvals") == 1, "within the retention the backoff still counts it")
            let expired = try await server.stats()
            #expect(expired["decoy_approvals_pending"] == 0)
            #expect(expired["decoy_approvals_stored"] == 1)
            server.clock.advance(by: 3600)
            try await eventually("the decoy was removed") { try await server.count("decoy_approvals") == 0 }
            #expect(try await server.stats()["decoy_approvals_stored"] == 0)
        }
    }
}
