import CountersignClient
import CountersignCore
import CountersignPushTesting
@testable import CountersignServer
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Testing

/// The device tokens Apple and Google would hand the app.
enum DeviceTokens {
    static let apple = String(repeating: "a1", count: 32)
    static let otherApple = String(repeating: "b2", count: 32)
    static let firebase = "fcm-registration-token-0123456789"
}

extension TestServer {
    /// Every delivery attempt of `approvalID`, oldest first.
    func deliveries(of approvalID: String) async throws -> [JSONValue] {
        let (status, body) = try await admin(.GET, "push-deliveries?approval_id=\(approvalID)")
        #expect(status == .ok)
        return (body.arrayValue ?? []).reversed()
    }

    /// Seconds between a scheduled retry's attempt and its next attempt (the API shows whole seconds).
    func retryDelay(_ delivery: JSONValue) throws -> TimeInterval {
        let formatter = ISO8601DateFormatter()
        let attempted = try #require(delivery["attempted_at"]?.stringValue.flatMap(formatter.date(from:)))
        let next = try #require(delivery["next_attempt_at"]?.stringValue.flatMap(formatter.date(from:)))
        return next.timeIntervalSince(attempted)
    }

    /// Configures a provider through the admin API.
    func configurePush(_ config: JSONValue) async throws {
        let (status, body) = try await admin(.POST, "push-configs", json: config)
        #expect(status == .created, "\(body)")
    }
}

extension TestBrowser {
    /// Waits out the polling interval on the server's clock, then polls.
    func pollLater(_ server: TestServer) async throws -> IdoResponse {
        server.clock.advance(by: 3)
        return try await poll()
    }
}

extension FakePushProviders {
    /// A sign-in whose first push Apple answered 429 (retry after 30 s), with its retry scheduled.
    func signInWaitingForRetry(_ server: TestServer) async throws -> (browser: TestBrowser, approvalID: String) {
        apns.script(ScriptedReply(status: 429, reason: "TooManyRequests", retryAfter: 30))
        let browser = TestBrowser(server)
        _ = try await browser.signIn(email: "ada@example.com")
        try await eventually("Apple answered 429") { self.apns.requests.count == 1 }
        let approvalID = try #require(try apnsPayload(0)["approval_id"])
        try await eventually("the retry is scheduled") { try await server.deliveries(of: approvalID).count == 1 }
        return (browser, approvalID)
    }

    /// Once the retry of `approvalID`'s push falls due, its job is closed without an attempt: Apple saw only
    /// the first request, and no attempt was added.
    func expectRetryDroppedUnsent(_ server: TestServer, approvalID: String) async throws {
        server.clock.advance(by: 31)
        let sql = server.sql
        try await eventually("the job is closed") {
            try await sql.raw("SELECT status FROM push_jobs").first(decoding: [String: String].self)?["status"] == "failed"
        }
        #expect(apns.requests.count == 1)
        #expect(try await server.deliveries(of: approvalID).count == 1)
    }
}

@Suite("Push delivery through APNs and FCM, off the request path")
struct PushDeliveryTests {
    @Test("APNs: the sign-in is pushed over HTTP/2 and the phone approves from the payload Apple received")
    func apnsHappyPath() async throws {
        try await FakePushProviders.withPhone(on: "apns") { providers, server, phone in
            let browser = TestBrowser(server)
            let waiting = try await browser.signIn(email: "ada@example.com")
            #expect(waiting.data?["push_status"] == "queued")

            try await eventually("Apple received the push") { providers.apns.requests.count == 1 }
            let request = providers.apns.requests[0]
            #expect(request.status == 200 && request.httpVersion == 2 && request.deviceToken == DeviceTokens.apple)
            let payload = try providers.apnsPayload(0)
            let approvalID = try #require(payload["approval_id"])
            #expect(request.headers["apns-topic"] == FakePushProviders.bundleID)
            #expect(request.headers["apns-collapse-id"] == approvalID)
            #expect(Set(payload.keys) == ["approval_id", "client_id", "expires_at", "application"])

            try await eventually("the delivery is recorded") { try await server.deliveries(of: approvalID).count == 1 }
            let delivery = try #require(try await server.deliveries(of: approvalID).first)
            #expect(delivery["status"] == "delivered" && delivery["channel"] == "apns" && delivery["attempt"] == 1)
            #expect(try await browser.pollLater(server).data?["push_status"] == "sent")

            let approved = try await phone.approve(fromPush: payload)
            #expect(approved.journeyStepID == JourneyStepID.success)
            let done = try await browser.poll()
            #expect(done.journeyStepID == JourneyStepID.success && done.token != nil)
        }
    }

    @Test("FCM: the sign-in is sent as a high-priority data message and the phone approves from its data")
    func fcmHappyPath() async throws {
        try await FakePushProviders.withPhone(on: "fcm") { providers, server, phone in
            let browser = TestBrowser(server)
            _ = try await browser.signIn(email: "ada@example.com")

            try await eventually("Google received the message") { providers.google.received.count == 1 }
            let message = providers.google.received[0]
            #expect(message.status == 200 && message.project == FakePushProviders.firebaseProject)
            #expect(message.body["token"] == .string(DeviceTokens.firebase))
            guard case .object(let android) = try #require(message.body["android"]) else { throw CancellationError() }
            #expect(android["priority"] == .string("high"))
            #expect(providers.google.issuedTokens.count == 1)
            let payload = try providers.fcmPayload(0)
            let approvalID = try #require(payload["approval_id"])
            try await eventually("the delivery is recorded") {
                try await server.deliveries(of: approvalID).first?["status"] == "delivered"
            }

            #expect(try await phone.approve(fromPush: payload).journeyStepID == JourneyStepID.success)
            #expect(try await browser.poll().token != nil)
        }
    }

    @Test("410 Unregistered marks the device's token invalid; the waiting sign-in and the next one answer push_token_invalid")
    func unregisteredToken() async throws {
        try await FakePushProviders.withPhone(on: "apns") { providers, server, phone in
            providers.apns.script(ScriptedReply(status: 410, reason: "Unregistered"))
            let browser = TestBrowser(server)
            _ = try await browser.signIn(email: "ada@example.com")
            try await eventually("Apple refused the token") { providers.apns.requests.count == 1 }
            let approvalID = try #require(try providers.apnsPayload(0)["approval_id"])
            try await eventually("the refusal is recorded") {
                try await server.deliveries(of: approvalID).first?["status"] == "token_invalid"
            }
            let ended = try await browser.poll()
            #expect(ended.journeyStepID == JourneyStepID.rejection)
            #expect(ended.data?["reason"] == .string(ErrorCode.pushTokenInvalid))

            let users = try await server.admin(.GET, "users").body.arrayValue ?? []
            let userID = try #require(users.first?["id"]?.stringValue)
            let device = try #require(try await server.admin(.GET, "users/\(userID)/devices").body.arrayValue?.first)
            #expect(device["id"] == .string(phone.deviceID) && device["status"] == "active")
            #expect(device["push_token_status"] == "invalid" && device["push_token_invalid_reason"] == "Unregistered")

            let next = try await TestBrowser(server).signIn(email: "ada@example.com")
            #expect(next.journeyStepID == JourneyStepID.rejection)
            #expect(next.data?["reason"] == .string(ErrorCode.pushTokenInvalid))
            // The refused token gets no job: the queue holds nothing more for the sender to send.
            let sql = server.sql
            #expect(try await sql.raw("SELECT id FROM push_jobs").all().count == 1, "nothing more is queued for a token Apple refused")
            #expect(providers.apns.requests.count == 1, "nothing more is sent to a token Apple refused")
        }
    }

    @Test("429 with Retry-After waits at least that long, then the push goes through")
    func retryAfter() async throws {
        try await FakePushProviders.withPhone(on: "apns") { providers, server, phone in
            let (browser, approvalID) = try await providers.signInWaitingForRetry(server)
            let first = try #require(try await server.deliveries(of: approvalID).first)
            #expect(first["status"] == "retry_scheduled" && first["reason"] == "TooManyRequests")
            #expect(try server.retryDelay(first) >= 30)
            #expect(try await browser.pollLater(server).data?["push_status"] == "queued")

            server.clock.advance(by: 30)
            try await eventually("the second attempt is delivered") {
                try await server.deliveries(of: approvalID).last?["status"] == "delivered"
            }
            #expect(try await server.deliveries(of: approvalID).map { $0["attempt"] } == [1, 2])
            #expect(try await phone.approve(fromPush: providers.apnsPayload(1)).journeyStepID == JourneyStepID.success)
            #expect(try await browser.poll().token != nil)
        }
    }

    @Test("500, 500, then success: each retry waits longer, and the third attempt is delivered")
    func serverErrorsThenSuccess() async throws {
        try await FakePushProviders.withPhone(on: "fcm") { providers, server, _ in
            providers.google.script(ScriptedReply(status: 500, reason: "INTERNAL"), ScriptedReply(status: 500, reason: "INTERNAL"))
            _ = try await TestBrowser(server).signIn(email: "ada@example.com")
            try await eventually("Google answered") { providers.google.received.count == 1 }
            let approvalID = try #require(try providers.fcmPayload(0)["approval_id"])
            var delays: [TimeInterval] = []
            for attempt in 1...2 {
                try await eventually("retry \(attempt) is scheduled") { try await server.deliveries(of: approvalID).count == attempt }
                let retry = try #require(try await server.deliveries(of: approvalID).last)
                #expect(retry["status"] == "retry_scheduled" && retry["reason"] == "INTERNAL")
                delays.append(try server.retryDelay(retry))
                // The admin API shows whole seconds: one more makes sure the retry is due.
                server.clock.advance(by: delays[attempt - 1] + 1)
            }
            try await eventually("the third attempt is delivered") { try await server.deliveries(of: approvalID).count == 3 }
            #expect(try await server.deliveries(of: approvalID).map { $0["status"] } == ["retry_scheduled", "retry_scheduled", "delivered"])
            // Each wait is set by PushRetryPolicy (PushRetryPolicyTests); here: the second is not shorter.
            #expect(delays[1] >= delays[0], "exponential backoff: \(delays)")
        }
    }

    @Test("a retry the approval would not live to see is given up, and the browser reads push_status failed")
    func retryBoundedByExpiry() async throws {
        try await FakePushProviders.withPhone(on: "apns") { providers, server, _ in
            providers.apns.script(ScriptedReply(status: 503, reason: "ServiceUnavailable", retryAfter: 3600))
            let browser = TestBrowser(server)
            _ = try await browser.signIn(email: "ada@example.com")
            try await eventually("Apple answered") { providers.apns.requests.count == 1 }
            let approvalID = try #require(try providers.apnsPayload(0)["approval_id"])
            try await eventually("the push is given up") { try await server.deliveries(of: approvalID).first?["status"] == "gave_up" }
            #expect(try await browser.pollLater(server).data?["push_status"] == "failed")
        }
    }

    @Test("a push waiting for its retry is dropped, unsent, once the browser has cancelled its approval")
    func cancelledApprovalIsNotPushedAgain() async throws {
        try await FakePushProviders.withPhone(on: "apns") { providers, server, _ in
            let (browser, approvalID) = try await providers.signInWaitingForRetry(server)
            #expect(try await browser.client.submitClientResponse(.cancel).data?["reason"] == "cancelled")

            try await providers.expectRetryDroppedUnsent(server, approvalID: approvalID)
        }
    }

    @Test("a device revoked while its push waits for a retry is not pushed to: the retry is dropped unsent, and a resend sends nothing")
    func revokedDeviceIsNotPushed() async throws {
        try await FakePushProviders.withPhone(on: "apns") { providers, server, phone in
            let (browser, approvalID) = try await providers.signInWaitingForRetry(server)
            #expect(try await server.admin(.POST, "devices/\(phone.deviceID)/revoke").status == .ok)

            try await providers.expectRetryDroppedUnsent(server, approvalID: approvalID)
            server.clock.advance(by: 10)
            #expect(try await browser.client.submitClientResponse(.resend).error == nil)
            #expect(try await server.count("push_jobs") == 1, "the resend queued no push")
            #expect(providers.apns.requests.count == 1, "Apple saw only the first request")
        }
    }

    @Test("a provider that has not answered does not hold up the browser: the sign-in answers while the push is still out")
    func slowProviderIsOffTheRequestPath() async throws {
        try await FakePushProviders.withPhone(on: "apns") { providers, server, phone in
            let apple = ReplyHold()
            providers.apns.script(.success(heldBy: apple))
            let browser = TestBrowser(server)
            let waiting = try await browser.signIn(email: "ada@example.com")
            // The browser has its answer while the push is still held at Apple.
            await apple.reached()
            #expect(providers.apns.requests.isEmpty)
            #expect(waiting.journeyStepID == JourneyStepID.mobileApproveAuthentication && waiting.data?["push_status"] == "queued")

            apple.release()
            try await eventually("the held answer arrives") { providers.apns.requests.count == 1 }
            // Sent once and delivered at the first attempt: a send made inline would have timed out first.
            let approvalID = try #require(try providers.apnsPayload(0)["approval_id"])
            try await eventually("the delivery is recorded") { try await server.deliveries(of: approvalID).count == 1 }
            let delivery = try #require(try await server.deliveries(of: approvalID).first)
            #expect(delivery["status"] == "delivered" && delivery["attempt"] == 1)
            #expect(try await phone.approve(fromPush: providers.apnsPayload(0)).journeyStepID == JourneyStepID.success)
        }
    }

    @Test("a provider that does not answer within the attempt's time limit is tried again: the attempt ends long before its lease, so no other instance can send the same push while it is still out")
    func attemptTimeLimit() async throws {
        try await FakePushProviders.withPhone(on: "apns", adjust: { $0.pushAttemptTimeLimit = 1 }) { providers, server, phone in
            let apple = ReplyHold()
            providers.apns.script(.success(heldBy: apple))
            _ = try await TestBrowser(server).signIn(email: "ada@example.com")
            await apple.reached()
            let sql = server.sql
            let approvalID = try #require(try await sql.raw("SELECT id FROM approvals").first(decoding: [String: String].self)?["id"])

            // Apple never answers the first request; the attempt ends at its limit, not at the 60 s lease.
            try await eventually("the unanswered attempt ended") { try await server.deliveries(of: approvalID).count == 1 }
            let first = try #require(try await server.deliveries(of: approvalID).first)
            #expect(first["status"] == "retry_scheduled")
            #expect(first["reason"] == "the provider did not answer within 1 s")

            server.clock.advance(by: try server.retryDelay(first) + 1)
            try await eventually("the retry is delivered") { try await server.deliveries(of: approvalID).last?["status"] == "delivered" }
            #expect(try await server.deliveries(of: approvalID).map { $0["attempt"] } == [1, 2])
            apple.release()
            #expect(try await phone.approve(fromPush: providers.apnsPayload(0)).journeyStepID == JourneyStepID.success)
        }
    }

    /// Only the instance holding a push records its attempt: one that outlasted its lease (the push taken
    /// over and sent again by another instance) must not add a second record, nor close the approval.
    @Test("an attempt that outlasted its lease, the push taken over by another instance meanwhile, records nothing")
    func attemptAfterItsLease() async throws {
        try await FakePushProviders.run { providers in
            let store = LogStore()
            try await TestServer.run(logger: Logger(label: "countersign.tests.capture") { _ in CapturingLogHandler(store: store) }) { server in
                try await server.configurePush(providers.apnsConfig)
                _ = try await RegisteredPhone.register(
                    server, email: "ada@example.com", channel: "apns", token: DeviceTokens.apple, appID: FakePushProviders.bundleID)
                let apple = ReplyHold()
                providers.apns.script(ScriptedReply(status: 410, reason: "Unregistered", hold: apple))
                _ = try await TestBrowser(server).signIn(email: "ada@example.com")
                await apple.reached()
                // Another instance claims the push, as it would once the lease ran out.
                let sql = server.sql
                try await sql.raw("UPDATE push_jobs SET lease = 'lease-of-another-instance'").run()
                apple.release()

                let approvalID = try #require(try await sql.raw("SELECT id FROM approvals").first(decoding: [String: String].self)?["id"])
                // The late attempt ends either way: recorded, or left out and logged.
                try await eventually("the late attempt ended") {
                    try await !server.deliveries(of: approvalID).isEmpty
                        || store.lines.withLock { $0.contains { $0.contains("another instance took the push over") } }
                }
                #expect(try await server.deliveries(of: approvalID).isEmpty)
                let job = try #require(try await sql.raw("SELECT lease, status FROM push_jobs").first(decoding: [String: String].self))
                #expect(job["lease"] == "lease-of-another-instance" && job["status"] == "queued")
                #expect(try await sql.raw("SELECT status FROM approvals").first(decoding: [String: String].self)?["status"] == "pending",
                        "the late 410 did not fail the approval")
            }
        }
    }

    @Test("one device's failing provider does not hold up another device's push")
    func oneDeviceFailingDoesNotAffectAnother() async throws {
        try await FakePushProviders.withPhone(on: "apns") { providers, server, _ in
            let grace = try await RegisteredPhone.register(
                server, email: "grace@example.com", channel: "apns", token: DeviceTokens.otherApple, appID: FakePushProviders.bundleID)
            let adasProvider = ReplyHold()
            providers.apns.script(
                forDeviceToken: DeviceTokens.apple, ScriptedReply(status: 500, reason: "InternalServerError", hold: adasProvider))
            _ = try await TestBrowser(server).signIn(email: "ada@example.com")
            // Ada's push is out and held before Grace signs in.
            await adasProvider.reached()
            let graceBrowser = TestBrowser(server)
            _ = try await graceBrowser.signIn(email: "grace@example.com")

            try await eventually("Grace's push is delivered") {
                providers.apns.requests.contains { $0.deviceToken == DeviceTokens.otherApple && $0.status == 200 }
            }
            #expect(!providers.apns.requests.contains { $0.deviceToken == DeviceTokens.apple }, "Ada's push is still out")
            let payload = try #require(providers.apns.requests.firstIndex { $0.deviceToken == DeviceTokens.otherApple })
            #expect(try await grace.approve(fromPush: providers.apnsPayload(payload)).journeyStepID == JourneyStepID.success)
            #expect(try await graceBrowser.poll().token != nil)

            adasProvider.release()
            try await eventually("Ada's failure is recorded as a retry") {
                providers.apns.requests.contains { $0.deviceToken == DeviceTokens.apple && $0.status == 500 }
            }
        }
    }

    @Test("a push queued for retry when the server stops is delivered after it restarts")
    func queuedPushSurvivesRestart() async throws {
        try await FakePushProviders.run { providers in
            try await TestDatabase.with(persistent: true) { database in
                try await restart(on: database, providers)
            }
        }
    }

    private func restart(on database: TestDatabase, _ providers: FakePushProviders) async throws {
            let clock = TestClock()
            let masterKey = TestServer.randomMasterKey()
            var phoneKeys: URL?
            var deviceID = ""
            var interaction: (id: String, token: String) = ("", "")
            try await TestServer.run(on: database, clock: clock, masterKey: masterKey) { server in
                try await server.configurePush(providers.apnsConfig)
                let phone = try await RegisteredPhone.register(
                    server, email: "ada@example.com", channel: "apns", token: DeviceTokens.apple, appID: FakePushProviders.bundleID)
                (phoneKeys, deviceID) = (phone.phone.keysURL, phone.deviceID)
                providers.apns.script(ScriptedReply(status: 503, reason: "ServiceUnavailable", retryAfter: 20))
                interaction = try await server.waitingWebLogin(email: "ada@example.com")
                try await eventually("the retry is scheduled") {
                    guard !providers.apns.requests.isEmpty, let approvalID = try providers.apnsPayload(0)["approval_id"] else { return false }
                    return try await server.deliveries(of: approvalID).count == 1
                }
            }
            let approvalID = try #require(try providers.apnsPayload(0)["approval_id"])

            try await TestServer.run(on: database, clock: clock, masterKey: masterKey) { server in
                clock.advance(by: 20)
                try await eventually("the push is delivered after the restart") {
                    try await server.deliveries(of: approvalID).last?["status"] == "delivered"
                }
                #expect(providers.apns.requests.count == 2)
                let phone = RegisteredPhone(
                    phone: TestPhone(client: server.client(), keysURL: phoneKeys), deviceID: deviceID, email: "ada@example.com")
                #expect(try await phone.approve(fromPush: providers.apnsPayload(1)).journeyStepID == JourneyStepID.success)
                let done = try await server.send(
                    .POST, "/v1/interactions/\(interaction.id)/submit", json: ["option": "client_input", "data": [:]], bearer: interaction.token)
                #expect(done.body["journey_step_id"] == .string(JourneyStepID.success))
            }
    }
}
