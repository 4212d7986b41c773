@testable import CountersignServer
import CountersignCore
import Foundation
import JWTKit
import Testing

@Suite("Secrets at rest: what a copy of the database gives away")
struct SecretsAtRestTests {
    @Test("token signing keys, the hash key and interaction states are sealed; the web code a browser shows is nowhere in the database")
    func sealedAtRest() async throws {
        try await TestServer.run { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            let waiting = try await TestBrowser(server).signIn("web_login", email: "ada@example.com")
            let otp = try #require(waiting.data?["otp"]?.stringValue)

            let sql = server.sql
            let keys = try await sql.raw("SELECT private_key_pem FROM signing_keys").all().map { try $0.decode(column: "private_key_pem", as: String.self) }
            #expect(!keys.isEmpty)
            #expect(keys.allSatisfy { !$0.contains("PRIVATE KEY") && (try? ES256PrivateKey(pem: $0)) == nil })
            let hashKeys = try await sql.raw("SELECT value FROM server_secrets").all().map { try $0.decode(column: "value", as: String.self) }
            #expect(!hashKeys.isEmpty)
            #expect(hashKeys.allSatisfy { Data(base64Encoded: $0)?.count != 32 }, "the HMAC key is not stored as its 32 bytes")
            let states = try await sql.raw("SELECT state FROM interactions").all().map { try $0.decode(column: "state", as: String.self) }
            #expect(!states.isEmpty)
            #expect(states.allSatisfy { !$0.contains(otp) && !$0.hasPrefix("{") })
            // Nor in any other text the sign-in wrote (times left out: their digits are not the code's).
            for table in ["approvals", "push_jobs", "push_deliveries", "security_events"] {
                for row in try await sql.raw("SELECT * FROM \(ident: table)").all() {
                    for column in row.columns where !column.hasSuffix("_at") {
                        let value = try? row.decode(column: column, as: String.self)
                        #expect(value?.contains(otp) != true, "\(table).\(column)")
                    }
                }
            }
            #expect(try await server.count("approvals") == 1)
        }
    }

    @Test("a sign-in that ended keeps no state: the browser's run and the phone's hold nothing once they finish but their last answers, sealed")
    func finishedRunsKeepNoState() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let otp = try await browser.codeShown(email: "ada@example.com")
            let sql = server.sql
            let running = try await sql.raw("SELECT state FROM interactions WHERE finished = \(bind: false)").all()
                .map { try $0.decode(column: "state", as: String.self) }
            #expect(running.count == 1 && running.allSatisfy { !$0.isEmpty }, "the waiting browser's state is kept")

            #expect(try await phone.approve(otp: otp).journeyStepID == JourneyStepID.success)
            let signedIn = try await browser.poll()
            #expect(signedIn.journeyStepID == JourneyStepID.success)
            let signed = try #require(signedIn.token)
            // The phone's registration, the browser's sign-in and the phone's approval.
            let states = try await sql.raw("SELECT state FROM interactions WHERE finished = \(bind: true)").all()
                .map { try $0.decode(column: "state", as: String.self) }
            #expect(states.count == 3)
            #expect(states.allSatisfy { $0.isEmpty })
            // Each keeps the answer that ended it for a client that lost it on the way, sealed.
            let answers = try await sql.raw("SELECT answer FROM idempotent_replays").all().map { try $0.decode(column: "answer", as: String.self) }
            #expect(answers.count == 3)
            #expect(answers.allSatisfy { !$0.contains(signed) && !$0.contains("action:success") && !$0.hasPrefix("{") })
            #expect(try await server.count("interactions") == 3)
        }
    }

    @Test("an ended run's replayed answer is opened only for the token it was kept for: one written beside it in the database gets 410, not the signed token")
    func replayBoundToItsToken() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let (id, token) = try await server.waitingWebLogin(email: "ada@example.com")
            try await phone.approve()
            server.clock.advance(by: 3)
            let ended = try await server.submit(id, "client_input", bearer: token)
            #expect(ended.body["journey_step_id"] == .string(JourneyStepID.success))
            #expect(try await server.submit(id, "client_input", bearer: token).body == ended.body, "kept for the token that asked")

            // Someone who can write to the database, but has not the master key, puts a token of their own there.
            let theirs = SecureRandom.identifier(prefix: "itk")
            let sql = server.sql
            let changed = try await sql.raw("""
                UPDATE idempotent_replays SET token_hash = \(bind: SecretDigest.hex(theirs)) WHERE id = \(bind: id) RETURNING id
                """).all()
            #expect(changed.count == 1)
            let refused = try await server.submit(id, "client_input", bearer: theirs)
            #expect(refused.status == .gone)
            #expect(refused.body["token"] == nil)
        }
    }

    @Test("a run that ends at its first step keeps no state either")
    func runEndedAtOnceKeepsNoState() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            _ = try await TestBrowser(server).client.startJourney("web_login_echo", additionalParams: ["email": "ada@example.com"])
            // The phone's journey rejects at once, in the call that starts it.
            #expect(try await phone.startApproval().journeyStepID == JourneyStepID.rejection)
            let sql = server.sql
            let row = try #require(try await sql.raw("SELECT finished, state FROM interactions WHERE journey_id = 'mobile_approve_echo'").first())
            #expect(try row.decode(column: "finished", as: Bool.self))
            #expect(try row.decode(column: "state", as: String.self).isEmpty)
        }
    }

    @Test("a signing key written into the database in clear is not used: the next start is refused, as with another master key")
    func clearKeyRefused() async throws {
        try await TestDatabase.with(persistent: true) { database in
            let clock = TestClock()
            let masterKey = TestServer.randomMasterKey()
            let clearKey = ES256PrivateKey()
            try await TestServer.run(on: database, clock: clock, masterKey: masterKey) { server in
                let sql = server.sql
                clock.advance(by: 1)
                try await sql.raw("UPDATE signing_keys SET retired_at = \(bind: clock.now()) WHERE retired_at IS NULL").run()
                try await sql.raw("""
                    INSERT INTO signing_keys (id, private_key_pem, created_at, activates_at)
                    VALUES ('key_clear', \(bind: clearKey.pemRepresentation), \(bind: clock.now()), \(bind: clock.now()))
                    """).run()
            }
            clock.advance(by: 1)  // the next start, a second later
            for key in [masterKey, TestServer.randomMasterKey()] {
                await #expect {
                    try await TestServer.run(on: database, clock: clock, masterKey: key) { _ in }
                } throws: { error in
                    "\(error)".contains("cannot be decrypted")
                }
            }
        }
    }
}
