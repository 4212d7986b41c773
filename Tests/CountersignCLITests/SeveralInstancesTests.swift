import AsyncHTTPClient
import CountersignClient
import CountersignCore
import CountersignPushTesting
import Crypto
import Foundation
import JWTKit
import SimulatedPhone
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Two `countersign serve` processes on one PostgreSQL database (DESIGN.md §6): a browser and its phone
/// may each land on either, an instance may die, and the database may go away for a moment. Runs in the
/// test script's PostgreSQL pass, one test at a time (two of them stop the shared cluster).
@Suite("Several instances on one PostgreSQL", .serialized, .enabled(if: Instances.postgresURL != nil))
struct SeveralInstancesTests {
    @Test("instances started at once on an empty database both come up: one brings the schema and the first secrets while the other waits, and the one admin key printed works on both")
    func startedTogether() async throws {
        try await Instances.run(environment: ["COUNTERSIGN_ADMIN_KEY": ""], together: true) { instances in
            let printed = instances.servers.compactMap { server -> String? in
                let output = server.output
                guard let shown = output.range(of: "keep it safe): ") else { return nil }
                return String(output[shown.upperBound...].prefix { !$0.isWhitespace })
            }
            #expect(printed.count == 1, "one admin key generated: \(printed)")
            let key = try #require(printed.first)
            for server in instances.servers {
                #expect(try await exchange(server.url + "/admin/v1/stats", bearer: key).status == 200)
            }
        }
    }

    @Test("a browser waiting on instance A is woken by the phone's answer on B, and the phone's long-poll on B by the request made on A")
    func wakeUpsCrossInstances() async throws {
        try await Instances.run { instances in
            let (a, b) = (instances[0].url, instances[1].url)
            let phone = try await SimulatedPhone.enrolled(on: b, email: "ada@example.com")

            // The phone waits on B before the request exists; only A's notification can wake it in time.
            async let inbox = phone.pending(wait: 25)
            try await eventually("B holds the phone's long-poll") { try await instances[1].stats()["inbox_waits_open"] as? Int == 1 }
            let signIn = try await WebSignIn.begin(on: a, email: "ada@example.com")
            let pushed = try await inbox
            #expect(pushed.count == 1)
            let payload = try #require(pushed.first)
            #expect(payload["approval_id"] != nil)

            // The browser's stream is open on A before the phone answers on B.
            let events = try signIn.openEvents(on: a)
            try await events.waitUntilOpen()
            try await phone.approve(payload, otp: signIn.otp)
            let outcome = try await events.outcome
            #expect(outcome.status == "approved")
            #expect(!outcome.keptAliveFirst, "the stream noticed only at its keep-alive, not through the notification")

            let token = try await signIn.finish()
            // Issued by A, verified with B's published keys; both publish the same keys.
            let claims = try await verify(token, withKeysOf: b)
            #expect(claims.deviceID == phone.profile.deviceID)
            #expect(try await instances[0].get("/.well-known/jwks.json") == (try await instances[1].get("/.well-known/jwks.json")))
        }
    }

    @Test("when instance A is killed while its browser waits, the browser carries on against B with the same interaction and token")
    func browserSurvivesLosingItsInstance() async throws {
        try await Instances.run { instances in
            let (a, b) = (instances[0].url, instances[1].url)
            let phone = try await SimulatedPhone.enrolled(on: b, email: "kay@example.com")
            let transport = SwitchingTransport(to: a)
            let signIn = try await WebSignIn.begin(on: a, email: "kay@example.com", transport: transport)
            let onA = try signIn.openEvents(on: a)
            try await onA.waitUntilOpen()

            instances[0].kill()
            await #expect(throws: (any Error).self) { try await onA.outcome }
            transport.point(at: b)

            let onB = try signIn.openEvents(on: b)
            let payload = try #require(try await phone.pending().first)
            try await phone.approve(payload, otp: signIn.otp)
            #expect(try await onB.outcome.status == "approved")
            let claims = try await verify(try await signIn.finish(), withKeysOf: b)
            #expect(claims.deviceID == phone.profile.deviceID)
        }
    }

    @Test("a phone whose every request goes to the other instance approves: each step goes on from the state the other instance saved")
    func stepsAlternateBetweenInstances() async throws {
        try await Instances.run { instances in
            let (a, b) = (instances[0].url, instances[1].url)
            // Pending on A, open on B, the code on A, biometrics on B: each instance answers a step of the
            // approval's journey after the other saved the next one, and must read that one, not the one it
            // saved itself before.
            let phone = try await SimulatedPhone.enrolled(on: a, email: "eve@example.com", transport: AlternatingTransport(between: [a, b]))
            let signIn = try await WebSignIn.begin(on: a, email: "eve@example.com")
            let payload = try #require(try await phone.pending().first)
            let opened = try await phone.open(payload)
            #expect(opened.journeyStepID == JourneyStepID.otpValidation)
            let done = try await phone.approve(from: opened, otp: signIn.otp)
            #expect(done.journeyStepID == JourneyStepID.success)
            let claims = try await verify(try await signIn.finish(), withKeysOf: b)
            #expect(claims.deviceID == phone.profile.deviceID)
        }
    }

    @Test("a key rotated on instance A is published by B within a minute, and A's tokens signed with it verify at B's JWKS")
    func rotatedKeyIsShared() async throws {
        try await Instances.run { instances in
            let (a, b) = (instances[0].url, instances[1].url)
            // At once: a rotation otherwise signs only 330 s later, when relying parties' caches hold the key.
            let rotated = try await exchange(a + "/admin/v1/signing-keys/rotate", json: #"{"immediately":true}"#, bearer: Instances.adminKey)
            #expect(rotated.status == 201)
            let kid = try #require(try JSONDecoder().decode([String: String].self, from: Data(rotated.body.utf8))["kid"])
            // Every instance re-reads the key set at least every 30 s.
            try await eventually("B publishes the key rotated on A") { try await exchange(b + "/.well-known/jwks.json").body.contains(kid) }

            let phone = try await SimulatedPhone.enrolled(on: b, email: "max@example.com")
            let signIn = try await WebSignIn.begin(on: a, email: "max@example.com")
            try await phone.approve(try #require(try await phone.pending().first), otp: signIn.otp)
            let token = try await signIn.finish()
            let header = try JSONDecoder().decode(
                [String: String].self, from: try #require(LenientBase64.decode(String(token.split(separator: ".")[0]))))
            #expect(header["kid"] == kid, "A signs with the key it rotated in")
            #expect(try await verify(token, withKeysOf: b).deviceID == phone.profile.deviceID)
        }
    }

    @Test("PostgreSQL restarted mid-flow: the waiting browser and the phone carry on after it and the sign-in completes")
    func flowOutlivesDatabaseRestart() async throws {
        try await Instances.run { instances in
            let (a, b) = (instances[0].url, instances[1].url)
            let phone = try await SimulatedPhone.enrolled(on: b, email: "lin@example.com")
            let signIn = try await WebSignIn.begin(on: a, email: "lin@example.com")
            // As a browser's EventSource, the stream is opened again if the restart drops it.
            let events = try signIn.openEvents(on: a, reconnecting: true)
            try await events.waitUntilOpen()

            try await Instances.pgCtl("restart -m fast -w")
            try await eventuallyReady(instances)

            let payload = try #require(try await phone.pending().first, "the request made before the restart is still there")
            try await phone.approve(payload, otp: signIn.otp)
            #expect(try await events.outcome.status == "approved")
            let claims = try await verify(try await signIn.finish(), withKeysOf: a)
            #expect(claims.deviceID == phone.profile.deviceID)
        }
    }

    @Test("while PostgreSQL is down: /readyz and every call answer 503 with Retry-After (never 500, never a hang), /healthz 200; then the instance goes on")
    func databaseOutageIsAnswered() async throws {
        try await Instances.run(count: 1) { instances in
            let server = instances[0]
            let started = try await exchange(server.url + "/v1/journeys/web_login/start", json: #"{"client_id":"demo-web"}"#).json
            let (id, token) = (try #require(started["interaction_id"] as? String), try #require(started["interaction_token"] as? String))
            try await Instances.pgCtl("stop -m fast -w")
            do {
                let ready = try await exchange(server.url + "/readyz")
                #expect(ready.status == 503)
                #expect(ready.retryAfter != nil)
                #expect(ready.body.contains(ErrorCode.notReady))
                #expect(try await exchange(server.url + "/healthz").status == 200)
                let start = try await exchange(server.url + "/v1/journeys/web_login/start", json: #"{"client_id":"demo-web"}"#)
                #expect(start.status == 503)
                #expect(start.retryAfter != nil)
                #expect(start.body.contains(ErrorCode.databaseUnavailable))
                let calls = [
                    try await exchange(
                        server.url + "/v1/interactions/\(id)/submit", json: #"{"option":"client_input","data":{"email":"ada@example.com"}}"#,
                        bearer: token),
                    try await exchange(server.url + "/v1/interactions/\(id)/events", bearer: token),
                    try await exchange(server.url + "/admin/v1/users", bearer: Instances.adminKey),
                ]
                for call in calls {
                    #expect(call.status == 503 && call.retryAfter != nil && call.body.contains(ErrorCode.databaseUnavailable), "\(call.body)")
                }
            } catch {
                try await Instances.pgCtl("start -w")
                throw error
            }
            try await Instances.pgCtl("start -w")
            try await eventuallyReady(instances)
            let start = try await exchange(server.url + "/v1/journeys/web_login/start", json: #"{"client_id":"demo-web"}"#)
            #expect(start.status == 200)
        }
    }

    @Test("while PostgreSQL's open connections answer nothing and new ones are refused: /readyz answers 503 at its time limit, and calls 503 with Retry-After, none waiting on; /healthz 200; then the instance goes on")
    func hungDatabaseIsAnswered() async throws {
        try await Instances.run(count: 1) { instances in
            let server = instances[0]
            let startURL = server.url + "/v1/journeys/web_login/start"
            // Pooled connections open and idle, as under load: the calls below take them.
            try await inGroups(of: 8, 8) { _ in
                let start = try await exchange(startURL, json: #"{"client_id":"demo-web"}"#)
                #expect(start.status == 200)
            }
            try await instances.whileConnectionsHang {
                // `exchange` gives up after 30 s: a probe or a call that waited for the database fails there.
                let ready = try await exchange(server.url + "/readyz")
                #expect(ready.status == 503)
                #expect(ready.retryAfter != nil)
                #expect(ready.body.contains("The database does not answer."))
                #expect(try await exchange(server.url + "/healthz").status == 200)
                // Calls that take a pooled connection send their statement and hear nothing; the others find
                // no connection to be had.
                try await inGroups(of: 12, 12) { _ in
                    let start = try await exchange(startURL, json: #"{"client_id":"demo-web"}"#)
                    #expect(start.status == 503 && start.retryAfter != nil && start.body.contains(ErrorCode.databaseUnavailable), "\(start.body)")
                }
            }
            try await eventuallyReady(instances)
            let start = try await exchange(startURL, json: #"{"client_id":"demo-web"}"#)
            #expect(start.status == 200)
        }
    }

    @Test("two senders and 100 pushes to the protocol-checking APNs: each is delivered exactly once")
    func eachPushIsSentOnce() async throws {
        let appleKey = P256.Signing.PrivateKey()
        let bundleID = "com.example.bank"
        let apns = try await FakeAPNs(
            keys: [FakeAPNs.Key(keyID: "KEY1234567", teamID: "TEAM123456", publicKeyPEM: appleKey.publicKey.pemRepresentation)],
            bundleIDs: [bundleID])
        defer { Task { await apns.stop() } }
        // Both instances also sweep every second, over the same rows.
        try await Instances.run(environment: ["COUNTERSIGN_SWEEP_INTERVAL": "1", "COUNTERSIGN_RECORD_RETENTION": "0"]) { instances in
            let servers = [instances[0].url, instances[1].url]
            let config = try JSONSerialization.data(withJSONObject: [
                "type": "apns", "name": "Bank app", "bundle_id": bundleID, "key_id": "KEY1234567", "team_id": "TEAM123456",
                "environment": "sandbox", "private_key_pem": appleKey.pemRepresentation, "endpoint": apns.url,
                "ca_certificate_pem": apns.certificateAuthority.rootCertificatePEM,
            ])
            #expect(try await exchange(servers[0] + "/admin/v1/push-configs", json: String(decoding: config, as: UTF8.self), bearer: Instances.adminKey).status == 201)

            let people = 100
            let tokens = (0..<people).map { String(format: "%064x", $0 + 1) }
            try await inGroups(of: 10, people) { index in
                _ = try await SimulatedPhone.enrolled(
                    on: servers[index % 2], email: "person\(index)@example.com",
                    push: PushRegistration(channel: "apns", token: tokens[index], appID: bundleID))
            }
            // The requests alternate between the instances, so both queue pushes and both senders claim them.
            try await inGroups(of: 20, people) { index in
                _ = try await WebSignIn.begin(on: servers[(index + 1) % 2], email: "person\(index)@example.com")
            }

            // Once no job is queued or being sent (on either instance: they share the table), no push can follow.
            try await eventually("every push job is finished") {
                guard apns.requests.count >= people else { return false }
                return try await instances[0].stats()["push_jobs_queued"] as? Int == 0
            }
            let sent = apns.requests.map(\.deviceToken)
            #expect(sent.count == people)
            #expect(Set(sent) == Set(tokens))
            #expect(apns.requests.allSatisfy { $0.status == 200 })
            for server in instances.servers {
                #expect(!server.output.contains("could not be removed"), "an instance's sweep failed")
            }
        }
    }

    // MARK: Helpers

    /// Runs `body` for 0..<count, `width` at a time.
    private func inGroups(of width: Int, _ count: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
        for start in stride(from: 0, to: count, by: width) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in start..<min(start + width, count) { group.addTask { try await body(index) } }
                try await group.waitForAll()
            }
        }
    }

    /// Waits until every instance says it is ready again.
    private func eventuallyReady(_ instances: Instances) async throws {
        for server in instances.servers where server.isRunning {
            try await eventually("instance on port \(server.port) is ready") { (try? await exchange(server.url + "/readyz").status) == 200 }
        }
    }

    private struct Claims: JWTPayload {
        let iss: IssuerClaim
        let deviceID: String

        enum CodingKeys: String, CodingKey {
            case iss
            case deviceID = "device_id"
        }

        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// Verifies `token` as a relying party would, with the keys `server` publishes.
    private func verify(_ token: String, withKeysOf server: String) async throws -> Claims {
        let (data, _) = try await URLSession.shared.data(from: URL(string: server + "/.well-known/jwks.json")!)
        let keys = JWTKeyCollection()
        try await keys.add(jwks: JSONDecoder().decode(JWKS.self, from: data))
        let claims = try await keys.verify(token, as: Claims.self)
        #expect(claims.iss.value == Instances.publicURL)
        return claims
    }
}

