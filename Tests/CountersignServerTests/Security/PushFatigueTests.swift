import CountersignClient
import CountersignCore
import Foundation
import Testing

@Suite("Push fatigue: one person cannot be bombarded with requests")
struct PushFatigueTests {
    func startSignIn(_ server: TestServer, email: String = "ada@example.com") async throws -> (status: Int, body: JSONValue, retryAfter: String?) {
        let started = try await server.send(.POST, "/v1/journeys/web_login_biometric_only/start", json: ["client_id": "demo-web"])
        let id = try #require(started.body["interaction_id"]?.stringValue)
        let submitted = try await server.send(
            .POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": ["email": .string(email)]],
            bearer: started.body["interaction_token"]?.stringValue)
        return (Int(submitted.status.code), submitted.body, submitted.headers.first(name: "Retry-After"))
    }

    func approvalCount(_ server: TestServer) async throws -> Int {
        try await server.sql.raw("SELECT id FROM approvals").all().count
    }

    @Test("sixty sign-ins in a row reach the phone once; the rest wait out a backoff that doubles, and an approval resets it")
    func bombing() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let first = try await startSignIn(server)
            #expect(first.status == 200)
            for _ in 0..<59 {
                let refused = try await startSignIn(server)
                #expect(refused.status == 429)
                #expect(refused.body["error"]?["code"] == .string(ErrorCode.rateLimited))
                #expect(refused.retryAfter == "10")
            }
            #expect(try await approvalCount(server) == 1)
            #expect(try await phone.inbox().count == 1)

            // After the backoff a new request replaces the one waiting: one pending approval per user.
            server.clock.advance(by: 11)
            #expect(try await startSignIn(server).status == 200)
            let statuses = try await server.sql
                .raw("SELECT status, failure_code FROM approvals ORDER BY created_at").all(decoding: [String: String?].self)
            #expect(statuses.map { $0["status"] ?? nil } == ["cancelled", "pending"])
            #expect(statuses.first?["failure_code"] == .some(ErrorCode.approvalSuperseded))
            #expect(try await phone.inbox().count == 1)
            // Two unanswered in a row: twice as long.
            #expect(try await startSignIn(server).retryAfter == "20")

            // A refusal stands for the Retry-After it gave; after it, an approval meanwhile has reset the
            // backoff: the next wait is the first step again, not 40 s.
            _ = try await phone.approve()
            #expect(try await startSignIn(server).retryAfter == "20", "refused again from memory")
            server.clock.advance(by: 21)
            #expect(try await startSignIn(server).status == 200)
            #expect(try await startSignIn(server).retryAfter == "10", "an approval resets the backoff")

            // Every refusal is logged; one a minute per user is stored, so the attack cannot fill the table.
            let events = try await server.admin(.GET, "security-events?kind=rate_limited").body["security_events"]?.arrayValue ?? []
            #expect(events.count == 1)
        }
    }

    /// Starts a sign-in for `email` from a browser at `address` (presenting `credential`, the browser
    /// credential it keeps, if any), behind the trusted balancer on `port`: the email's answer, with the
    /// interaction to poll.
    func startSignIn(port: Int, email: String = "ada@example.com", from address: String, credential: String? = nil) async throws -> (
        status: Int, retryAfter: String?, id: String, token: String?
    ) {
        let headers = credential.map { ["Countersign-Browser-Credential": $0] } ?? [:]
        let started = try await throughBalancer(
            port: port, "POST", "/v1/journeys/web_login_biometric_only/start", json: #"{"client_id": "demo-web"}"#, headers: headers,
            from: address)
        let id = try #require(started.body["interaction_id"]?.stringValue)
        let submitted = try await throughBalancer(
            port: port, "POST", "/v1/interactions/\(id)/submit", json: #"{"option": "client_input", "data": {"email": "\#(email)"}}"#,
            bearer: started.body["interaction_token"]?.stringValue, headers: headers, from: address)
        return (submitted.status, submitted.retryAfter, id, submitted.body["interaction_token"]?.stringValue)
    }

    /// Ada's sign-in from `address`, approved on her phone: the browser credential its success hands out.
    func signInApproved(
        _ server: TestServer, port: Int, _ phone: RegisteredPhone, from address: String, credential: String? = nil
    ) async throws -> String {
        let started = try await startSignIn(port: port, from: address, credential: credential)
        #expect(started.status == 200)
        try await phone.approve(now: server.clock.now())
        server.clock.advance(by: 3)
        let done = try await throughBalancer(
            port: port, "POST", "/v1/interactions/\(started.id)/submit", json: #"{"option": "client_input", "data": {}}"#,
            bearer: started.token, from: address)
        #expect(done.body["journey_step_id"] == .string(JourneyStepID.success))
        return try #require(done.body["data"]?["browser_credential"]?.stringValue)
    }

    @Test("a stranger who types a person's email again and again backs off alone: the person's own sign-in from another address waits only the first step after the stranger's newest request, and she signs in")
    func strangerBacksOffAlone() async throws {
        try await TestServer.runBehindBalancer(adjust: { _ in }) { server, port in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let stranger = "203.0.113.7"
            for wait in [10, 20, 40] {
                #expect(try await startSignIn(port: port, from: stranger).status == 200)
                let refused = try await startSignIn(port: port, from: stranger)
                #expect(refused.status == 429)
                #expect(refused.retryAfter == String(wait))
                if wait < 40 { server.clock.advance(by: TimeInterval(wait + 1)) }
            }

            // Ada, at home, just after the stranger's newest request: she waits 10 s, not the stranger's 40.
            let home = "198.51.100.20"
            let held = try await startSignIn(port: port, from: home)
            #expect(held.status == 429)
            #expect(held.retryAfter == "10")
            server.clock.advance(by: 11)
            let ada = try await startSignIn(port: port, from: home)
            #expect(ada.status == 200)
            #expect(try await startSignIn(port: port, from: stranger).status == 429, "the stranger still backs off")
            #expect(try await phone.inbox().count == 1, "the stranger's request was withdrawn from the phone")
            try await phone.approve()
            server.clock.advance(by: 3)
            let resumed = try await server.submit(ada.id, "client_input", bearer: try #require(ada.token))
            #expect(resumed.body["journey_step_id"] == .string(JourneyStepID.success))
        }
    }

    @Test("\"this wasn't me\" holds back the address of the request reported, for an hour; the person's own sign-in from another address goes through")
    func notMeHoldsBackTheReportedSource() async throws {
        try await TestServer.runBehindBalancer(adjust: { _ in }) { server, port in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let stranger = "203.0.113.7"
            #expect(try await startSignIn(port: port, from: stranger).status == 200)
            _ = try await phone.startApproval()
            #expect(try await phone.phone.client.submitClientResponse(.cancel, data: ["reason": "not_me"]).journeyStepID == JourneyStepID.rejection)

            server.clock.advance(by: 60)
            let refused = try await startSignIn(port: port, from: stranger)
            #expect(refused.status == 429)
            #expect(refused.retryAfter == "3540")
            let ada = try await startSignIn(port: port, from: "198.51.100.20")
            #expect(ada.status == 200)
            try await phone.approve()
            let resumed = try await server.submit(ada.id, "client_input", bearer: try #require(ada.token))
            #expect(resumed.body["journey_step_id"] == .string(JourneyStepID.success))
        }
    }

    @Test("a stranger's sign-ins for a person's email through another application's client, where she has no account, do not count against her sign-ins here")
    func decoysOfAnotherApplication() async throws {
        try await TestServer.run { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            #expect(try await server.admin(.POST, "applications", json: ["id": "shop", "name": "Shop"]).status == .created)
            for (id, kind) in [("shop-web", "web"), ("shop-app", "native")] {
                #expect(try await server.admin(.POST, "applications/shop/clients", json: ["id": .string(id), "name": "C", "kind": .string(kind)]).status == .created)
            }
            // Two unanswered through the shop, each as soon as the shop's backoff lets it: counted here, they
            // would hold Ada back 20 s.
            for _ in 0..<2 {
                let started = try await server.send(.POST, "/v1/journeys/web_login_biometric_only/start", json: ["client_id": "shop-web"])
                let waiting = try await server.send(
                    .POST, "/v1/interactions/\(try #require(started.body["interaction_id"]?.stringValue))/submit",
                    json: ["option": "client_input", "data": ["email": "ada@example.com"]], bearer: started.body["interaction_token"]?.stringValue)
                #expect(waiting.status == .ok)
                server.clock.advance(by: 11)
            }
            #expect(try await startSignIn(server).status == 200, "Ada's own sign-in through the bank's client is not held back")
        }
    }

    @Test("addresses taking turns at one person each back off alone, and together ring her phone at most 10 times an hour: their other requests wait in her inbox without ringing")
    func addressesTakingTurns() async throws {
        try await TestServer.runBehindBalancer(adjust: { _ in }) { server, port in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            var elapsed: TimeInterval = 0
            var rings: [(at: TimeInterval, total: Int)] = []
            var admitted = 0
            var silentOneInInbox = false
            while elapsed < 3 * 3600 {
                var shortestWait = TimeInterval.infinity
                for host in 1...4 {
                    let sent = try await startSignIn(port: port, from: "203.0.113.\(host)")
                    if sent.status == 200 {
                        admitted += 1
                        let total = try await server.count("push_jobs")
                        if total == rings.last?.total, !silentOneInInbox {
                            // Past the cap: not rung, but in the phone's inbox.
                            #expect(try await phone.inbox(now: server.clock.now()).count == 1)
                            silentOneInInbox = true
                        }
                        rings.append((elapsed, total))
                    } else {
                        #expect(sent.status == 429)
                        shortestWait = min(shortestWait, TimeInterval(try #require(sent.retryAfter.flatMap(Int.init))))
                    }
                }
                let step = shortestWait.isFinite ? shortestWait : 1
                server.clock.advance(by: step)
                elapsed += step
            }
            // Each address alone: 0, 10, 30, 70 … 2550 s, then an hour apart.
            #expect(admitted > 30)
            for hour in 0..<3 {
                let inHour = rings.filter { Int($0.at) / 3600 == hour }.map(\.total)
                #expect((inHour.max() ?? 0) - (rings.last { Int($0.at) / 3600 < hour }?.total ?? 0) <= 10, "hour \(hour)")
            }
            #expect(try await server.count("approvals") == admitted)
            #expect(try await server.count("push_jobs") < admitted)
            #expect(silentOneInInbox)
        }
    }

    @Test("a browser Ada signed in with before is not held back by strangers: it replaces their waiting request at once, rings past the cap, and no one else's request replaces it or rings while it waits; revoked, it counts by its address again")
    func knownBrowser() async throws {
        try await TestServer.runBehindBalancer(adjust: { _ in }) { server, port in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let home = "198.51.100.20"
            let credential = try await signInApproved(server, port: port, phone, from: home)
            let users = try await server.admin(.GET, "users?external_user_id=ada@example.com").body.arrayValue ?? []
            let userID = try #require(users.first?["id"]?.stringValue)
            let listed = try await server.admin(.GET, "users/\(userID)/browser-credentials").body.arrayValue ?? []
            #expect(listed.count == 1)
            #expect(listed.first?["application_id"] == .string("demo"))
            #expect(listed.first?["secret_hash"] == nil)

            // Strangers at eleven addresses, each as soon as the one before lets it: with Ada's own, the phone
            // rings ten times in the hour.
            #expect(try await server.count("push_jobs") == 1)
            for host in 1...11 {
                server.clock.advance(by: 11)
                #expect(try await startSignIn(port: port, from: "203.0.113.\(host)").status == 200)
            }
            #expect(try await server.count("push_jobs") == 10, "the last two requests wait in the inbox without ringing")

            // Ada at a café, at once after the strangers' newest: admitted, and her request rings.
            let cafe = "192.0.2.50"
            let ada = try await startSignIn(port: port, from: cafe, credential: credential)
            #expect(ada.status == 200)
            #expect(try await server.count("push_jobs") == 11)
            // While hers waits, a stranger's request is answered as any other (no refusal tells him she is
            // signing in now), but neither replaces hers nor rings: it waits in the inbox beside it.
            server.clock.advance(by: 30)
            let stranger = try await startSignIn(port: port, from: "203.0.113.99")
            #expect(stranger.status == 200)
            #expect(try await server.count("push_jobs") == 11)
            #expect(try await phone.inbox(now: server.clock.now()).count == 2)
            try await phone.approve(now: server.clock.now())
            server.clock.advance(by: 3)
            let resumed = try await server.submit(ada.id, "client_input", bearer: try #require(ada.token))
            #expect(resumed.body["journey_step_id"] == .string(JourneyStepID.success))

            // Revoked, the credential is a browser like any other: behind a stranger's waiting request, it waits.
            let id = try #require(listed.first?["id"]?.stringValue)
            #expect(try await server.admin(.POST, "browser-credentials/\(id)/revoke").body["status"] == .string("revoked"))
            server.clock.advance(by: 3600)
            #expect(try await startSignIn(port: port, from: "203.0.113.100").status == 200)
            let revoked = try await startSignIn(port: port, from: cafe, credential: credential)
            #expect(revoked.status == 429)
            #expect(revoked.retryAfter == "10")
            let events = try await server.admin(.GET, "security-events?kind=credential_revoked").body["security_events"]?.arrayValue ?? []
            #expect(events.count == 1)
        }
    }

    @Test("a browser credential counts for its 90 days only: past them it is no credential, and the sweep removes it")
    func expiredCredential() async throws {
        try await TestServer.runBehindBalancer(adjust: { $0.sweepInterval = 3600 }) { server, port in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let home = "198.51.100.20"
            let credential = try await signInApproved(server, port: port, phone, from: home)
            // Just before its end: behind a stranger's waiting request, it is admitted at once.
            server.clock.advance(by: 90 * 86400 - 100)
            #expect(try await startSignIn(port: port, from: "203.0.113.1").status == 200)
            #expect(try await startSignIn(port: port, from: home, credential: credential).status == 200)
            // Past it: the browser waits behind a stranger's request as any other.
            server.clock.advance(by: 3600)
            #expect(try await startSignIn(port: port, from: "203.0.113.2").status == 200)
            let expired = try await startSignIn(port: port, from: home, credential: credential)
            #expect(expired.status == 429)
            #expect(expired.retryAfter == "10")
            #expect(try await server.count("browser_credentials") == 1)
            try await server.sweep()
            #expect(try await server.count("browser_credentials") == 0)
        }
    }

    @Test("a browser credential counts only for the user it was issued to: presented for another person, or made up, it is no credential")
    func credentialOfAnotherUser() async throws {
        try await TestServer.runBehindBalancer(adjust: { _ in }) { server, port in
            let ada = try await RegisteredPhone.register(server, email: "ada@example.com")
            _ = try await RegisteredPhone.register(server, email: "bo@example.com")
            let credential = try await signInApproved(server, port: port, ada, from: "198.51.100.20")
            for presented in [credential, "made-up"] {
                server.clock.advance(by: 3600)
                #expect(try await startSignIn(port: port, email: "bo@example.com", from: "203.0.113.1").status == 200)
                let held = try await startSignIn(port: port, email: "bo@example.com", from: "198.51.100.20", credential: presented)
                #expect(held.status == 429)
                #expect(held.retryAfter == "10")
            }
        }
    }

    @Test("the addresses of one IPv6 /64 are one source: the host's third request waits as a third does, not as a new address's first")
    func oneNetworkIsOneSource() async throws {
        try await TestServer.runBehindBalancer(adjust: { _ in }) { server, port in
            // An email with no phone meets the same limits.
            let host = "2001:db8:1:2::1"
            #expect(try await startSignIn(port: port, email: "bo@example.com", from: host).status == 200)
            server.clock.advance(by: 11)
            #expect(try await startSignIn(port: port, email: "bo@example.com", from: host).status == 200)
            let sameNetwork = try await startSignIn(port: port, email: "bo@example.com", from: "2001:db8:1:2::ffff")
            #expect(sameNetwork.status == 429)
            #expect(sameNetwork.retryAfter == "20")
            #expect(try await server.count("decoy_approvals") == 2)
        }
    }

    @Test(
        "sign-ins for one person sent at the same moment reach the phone once (or make one decoy): the others are refused as the limits refuse, and keep nothing",
        arguments: [true, false])
    func simultaneous(hasPhone: Bool) async throws {
        try await TestServer.run { server in
            let email = "ada@example.com"
            let phone = hasPhone ? try await RegisteredPhone.register(server, email: email) : nil
            // Every browser reaches the email step before any of them sends it.
            var browsers: [(id: String, token: String?)] = []
            for _ in 0..<12 {
                let started = try await server.send(.POST, "/v1/journeys/web_login_biometric_only/start", json: ["client_id": "demo-web"])
                browsers.append((try #require(started.body["interaction_id"]?.stringValue), started.body["interaction_token"]?.stringValue))
            }
            // No request is written until every browser has sent its email and read the person's history.
            let answers = try await server.atOnce(writingTo: ["approvals", "decoy_approvals"], browsers.map { browser in
                { @Sendable in
                    let submitted = try await server.send(
                        .POST, "/v1/interactions/\(browser.id)/submit", json: ["option": "client_input", "data": ["email": .string(email)]],
                        bearer: browser.token)
                    return (status: submitted.status.code, body: submitted.body)
                }
            })
            #expect(answers.filter { $0.status == 200 }.count == 1)
            for refused in answers where refused.status != 200 {
                #expect(refused.status == 429)
                #expect(refused.body["error"]?["code"] == .string(ErrorCode.rateLimited))
            }
            #expect(try await server.count(hasPhone ? "approvals" : "decoy_approvals") == 1)
            #expect(try await server.count("push_jobs") == (hasPhone ? 1 : 0))
            if let phone { #expect(try await phone.inbox().count == 1) }
        }
    }

    @Test("\"this wasn't me\" fails the sign-in, is recorded for the operator, and stops new requests to that person from that address for an hour")
    func notMe() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.signIn(email: "ada@example.com")
            _ = try await phone.startApproval()
            let denied = try await phone.phone.client.submitClientResponse(.cancel, data: ["reason": "not_me"])
            #expect(denied.journeyStepID == JourneyStepID.rejection)
            let web = try await browser.poll()
            #expect(web.data?["reason"] == .string(ErrorCode.mobileRejected))

            let events = try await server.admin(.GET, "security-events?kind=not_me").body["security_events"]?.arrayValue ?? []
            #expect(events.count == 1)
            #expect(events.first?["device_id"] == .string(phone.deviceID))
            #expect(events.first?["approval_id"]?.stringValue?.hasPrefix("apr_") == true)

            server.clock.advance(by: 600)
            let blocked = try await startSignIn(server)
            #expect(blocked.status == 429)
            #expect(blocked.body["error"]?["code"] == .string(ErrorCode.rateLimited))
            #expect(blocked.retryAfter == "3000")
            server.clock.advance(by: 3001)
            #expect(try await startSignIn(server).status == 200)
        }
    }

    @Test("a plain deny is no report: the next request waits the backoff, and only that")
    func plainDeny() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            _ = try await startSignIn(server)
            _ = try await phone.startApproval()
            let denied = try await phone.phone.client.submitClientResponse(.cancel)
            #expect(denied.journeyStepID == JourneyStepID.rejection)
            #expect(try await server.admin(.GET, "security-events?kind=not_me").body["security_events"]?.arrayValue?.isEmpty == true)
            let backingOff = try await startSignIn(server)
            #expect(backingOff.status == 429)
            #expect(backingOff.body["error"]?["code"] == .string(ErrorCode.rateLimited))
            server.clock.advance(by: 11)
            #expect(try await startSignIn(server).status == 200)
        }
    }
}
