import CountersignClient
import CountersignCore
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

@Suite("Mobile approve start: device proof refusals")
struct MobileApproveStartTests {
    /// A pending approval for Ada's phone, with its payload.
    func pendingApproval(_ server: TestServer) async throws -> (phone: RegisteredPhone, payload: [String: String]) {
        let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
        _ = try await TestBrowser(server).signIn(email: "ada@example.com")
        return (phone, try #require(try await phone.inbox().first))
    }

    /// Posts a mobile approve start signed by `signer` over `message` (default: the right message), or
    /// carrying `signature` as given.
    func start(
        _ server: TestServer, payload: [String: String], deviceID: String, signer: CountersignClient.Authenticator,
        timestamp: Int? = nil, message: String? = nil, signature: String? = nil
    ) async throws -> (status: HTTPStatus, code: String?) {
        let time = timestamp ?? Int(server.clock.now().timeIntervalSince1970)
        var signed = signature ?? ""
        if signature == nil {
            signed = try await signer.signWithDeviceKey(message ?? DeviceProof.approveMessage(approvalID: payload["approval_id"]!, timestamp: time))
        }
        let response = try await server.send(.POST, "/v1/mobile-approve/start", json: [
            "client_id": .string(payload["client_id"]!), "payload": .object(payload.mapValues { .string($0) }),
            "device_id": .string(deviceID), "timestamp": .number(Double(time)), "device_signature": .string(signed),
        ])
        return (response.status, response.body["error"]?["code"]?.stringValue)
    }

    /// The phone's proof for the approval of `payload`, signed now: its time and its signature.
    func proof(_ server: TestServer, _ phone: RegisteredPhone, _ payload: [String: String]) async throws -> (time: Int, signature: String) {
        let time = Int(server.clock.now().timeIntervalSince1970)
        return (time, try await phone.phone.authenticator.signWithDeviceKey(DeviceProof.approveMessage(approvalID: payload["approval_id"]!, timestamp: time)))
    }

    @Test("a signature over anything else is 401 invalid_token")
    func badSignature() async throws {
        try await TestServer.run { server in
            let (phone, payload) = try await pendingApproval(server)
            let result = try await start(server, payload: payload, deviceID: phone.deviceID, signer: phone.phone.authenticator, message: "other")
            #expect(result.status == .unauthorized)
            #expect(result.code == ErrorCode.invalidToken)
        }
    }

    @Test("another user's device is 403 device_not_owned")
    func deviceOfAnotherUser() async throws {
        try await TestServer.run { server in
            let (_, payload) = try await pendingApproval(server)
            let eve = try await RegisteredPhone.register(server, email: "eve@example.com")
            let result = try await start(server, payload: payload, deviceID: eve.deviceID, signer: eve.phone.authenticator)
            #expect(result.status == .forbidden)
            #expect(result.code == "device_not_owned")
        }
    }

    @Test("the user's other device is 403 device_not_selected")
    func deviceNotSelected() async throws {
        try await TestServer.run(adjust: { _ in }) { server in
            let first = try await RegisteredPhone.register(server, email: "ada@example.com")
            let second = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let choice = try await browser.signIn(email: "ada@example.com")
            let code = try #require(choice.data?["devices"]?.arrayValue?.last?["code"])
            _ = try await browser.client.submitClientResponse(.clientInput, data: ["selected_device_code": code])
            let payload = try #require(try await first.inbox().first)
            let result = try await start(server, payload: payload, deviceID: second.deviceID, signer: second.phone.authenticator)
            #expect(result.status == .forbidden)
            #expect(result.code == "device_not_selected")
        }
    }

    @Test("a revoked device is 403 device_revoked")
    func revokedDevice() async throws {
        try await TestServer.run { server in
            let (phone, payload) = try await pendingApproval(server)
            _ = try await server.admin(.POST, "devices/\(phone.deviceID)/revoke")
            let result = try await start(server, payload: payload, deviceID: phone.deviceID, signer: phone.phone.authenticator)
            #expect(result.status == .forbidden)
            #expect(result.code == "device_revoked")
        }
    }

    @Test("a timestamp more than two minutes off is refused", arguments: [-121, 121])
    func staleTimestamp(offset: Int) async throws {
        try await TestServer.run { server in
            let (phone, payload) = try await pendingApproval(server)
            let result = try await start(
                server, payload: payload, deviceID: phone.deviceID, signer: phone.phone.authenticator,
                timestamp: Int(server.clock.now().timeIntervalSince1970) + offset)
            #expect(result.status == .unauthorized)
            #expect(result.code == "timestamp_out_of_range")
        }
    }

    @Test("the same proof is accepted once, however its signature is re-encoded")
    func replayedProof() async throws {
        try await TestServer.run { server in
            let (phone, payload) = try await pendingApproval(server)
            let (time, signature) = try await proof(server, phone, payload)
            func send(_ signature: String) async throws -> (status: HTTPStatus, code: String?) {
                try await start(
                    server, payload: payload, deviceID: phone.deviceID, signer: phone.phone.authenticator, timestamp: time, signature: signature)
            }
            #expect(try await send(signature).status == .ok)

            let der = try #require(Data(base64Encoded: signature))
            let raw = try P256.Signing.ECDSASignature(derRepresentation: der).rawRepresentation
            let urlAlphabet = signature.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            let rawForm = raw.base64EncodedString()
            let negatedS = (raw.prefix(32) + Self.p256Order(minus: raw.suffix(32))).base64EncodedString()
            for replay in [signature, urlAlphabet, " \(signature)\n", rawForm, negatedS] {
                let refused = try await send(replay)
                #expect(refused.status == .unauthorized, "\(replay)")
                #expect(refused.code == "signature_replayed", "\(replay)")
            }
            // Each replay is logged; one a minute per device is stored.
            let events = try await server.admin(.GET, "security-events?kind=signature_replayed").body["security_events"]?.arrayValue ?? []
            #expect(events.count == 1)
            #expect(events.allSatisfy { $0["device_id"] == .string(phone.deviceID) })
        }
    }

    @Test("a proof refused for the wrong client is used all the same: sent again with the right client, it is a replay")
    func refusedProofIsUsed() async throws {
        try await TestServer.run { server in
            let (phone, payload) = try await pendingApproval(server)
            let (time, signature) = try await proof(server, phone, payload)
            var wrongClient = payload
            wrongClient["client_id"] = "demo-web"
            let refused = try await start(
                server, payload: wrongClient, deviceID: phone.deviceID, signer: phone.phone.authenticator, timestamp: time, signature: signature)
            #expect(refused.code == ErrorCode.clientNotInApplication)
            let replayed = try await start(
                server, payload: payload, deviceID: phone.deviceID, signer: phone.phone.authenticator, timestamp: time, signature: signature)
            #expect(replayed.status == .unauthorized)
            #expect(replayed.code == "signature_replayed")
        }
    }

    /// Sent together, several copies may all pass the signature check before any commits: the use's
    /// primary key must still let one through.
    @Test("the same proof sent eight times at once starts one journey; the others are refused as replays")
    func proofSentManyTimesAtOnce() async throws {
        try await TestServer.run { server in
            let (phone, payload) = try await pendingApproval(server)
            let (time, signature) = try await proof(server, phone, payload)
            let answers = try await withThrowingTaskGroup(of: (status: HTTPStatus, code: String?).self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await start(
                            server, payload: payload, deviceID: phone.deviceID, signer: phone.phone.authenticator, timestamp: time,
                            signature: signature)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter { $0.status == .ok }.count == 1)
            #expect(answers.filter { $0.status == .unauthorized && $0.code == "signature_replayed" }.count == 7)
        }
    }

    /// n − s for P-256's group order n: the other `s` that makes the same ECDSA signature verify.
    static func p256Order(minus s: Data) -> Data {
        let order: [UInt8] = [
            0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
        ]
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for (index, (a, b)) in zip(order, Array(s)).enumerated().reversed() {
            let difference = Int(a) - Int(b) - borrow
            result[index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        return Data(result)
    }

    @Test("an approval already approved is 410 approval_closed")
    func alreadyResolved() async throws {
        try await TestServer.run { server in
            let (phone, payload) = try await pendingApproval(server)
            try await phone.approve()
            let result = try await start(server, payload: payload, deviceID: phone.deviceID, signer: phone.phone.authenticator)
            #expect(result.status == .gone)
            #expect(result.code == "approval_closed")
        }
    }

    @Test("a client of another application is 403 client_not_in_application")
    func clientOfAnotherApplication() async throws {
        try await TestServer.run { server in
            let (phone, payload) = try await pendingApproval(server)
            _ = try await server.admin(.POST, "applications", json: ["id": "other", "name": "Other"])
            _ = try await server.admin(.POST, "applications/other/clients", json: ["id": "other-native", "name": "O", "kind": "native"])
            var foreign = payload
            foreign["client_id"] = "other-native"
            let result = try await start(server, payload: foreign, deviceID: phone.deviceID, signer: phone.phone.authenticator)
            #expect(result.status == .forbidden)
            #expect(result.code == "client_not_in_application")
        }
    }

    @Test("an unknown approval is 404 and a malformed body is 400")
    func unknownAndMalformed() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let unknown = try await start(
                server, payload: ["approval_id": "apr_nope", "client_id": "demo-native"], deviceID: phone.deviceID,
                signer: phone.phone.authenticator)
            #expect(unknown.status == .notFound)
            let malformed = try await server.send(.POST, "/v1/mobile-approve/start", json: ["payload": "x", "timestamp": "soon"])
            #expect(malformed.status == .badRequest)
            #expect(malformed.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
        }
    }
}

@Suite("Instant resume and the inbox")
struct ResumeAndInboxTests {
    @Test("the events stream delivers the approval the moment the phone approves")
    func eventsStream() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let (id, token) = try await server.waitingWebLogin(email: "ada@example.com")

            let stream = server.openEventsStream(id, token: token)
            try await phone.approve()
            let response = try await stream.value
            #expect(response.status == .ok)
            #expect(response.headers.contentType?.description.hasPrefix("text/event-stream") == true)
            #expect(response.body.string.hasPrefix(": open\n\n"), "the head and a first comment go out at once")
            #expect(response.body.string.contains("event: approval\ndata: {\"status\":\"approved\"}"))

            // Woken by the event, the browser submits at once and resumes.
            let resumed = try await server.send(.POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": [:]], bearer: token)
            #expect(resumed.body["journey_step_id"] == .string(JourneyStepID.success))
        }
    }

    @Test("a stream that outlives its interaction ends with expired, never with pending")
    func streamOutlivesItsInteraction() async throws {
        try await TestServer.run(adjust: { $0.interactionLifetime = 60 }) { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            let (id, token) = try await server.waitingWebLogin(email: "ada@example.com")
            let stream = try await server.openHeldEventsStream(id, token: token)
            // Past the interaction's 60 s, well before the approval's own expiry: the stream ends at its next keep-alive.
            server.clock.advance(by: 61)
            let body = try await stream.value.body.string
            #expect(body.contains("event: approval\ndata: {\"status\":\"expired\"}"))
            #expect(!body.contains("pending"))
        }
    }

    @Test("the events stream needs the current interaction token")
    func eventsNeedToken() async throws {
        try await TestServer.run { server in
            let started = try await server.send(.POST, "/v1/journeys/web_login_biometric_only/start", json: ["client_id": "demo-web"])
            let id = try #require(started.body["interaction_id"]?.stringValue)
            let response = try await server.send(.GET, "/v1/interactions/\(id)/events", bearer: "itk_wrong")
            #expect(response.status == .unauthorized)
        }
    }

    /// The waiting long-poll answers with the payload it is rung with, without reading the inbox again:
    /// the same payload a read of the inbox gives.
    @Test("an inbox long-poll returns the approval pushed while it waits, as a read of the inbox shows it")
    func inboxLongPoll() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let waiting = Task { try await phone.inbox(wait: 30) }
            try await eventually("the long-poll waits") { try await server.stats()["inbox_waits_open"] == .number(1) }
            _ = try await TestBrowser(server).signIn(email: "ada@example.com")
            let approvals = try await waiting.value
            #expect(approvals.count == 1)
            #expect(approvals.first?["client_id"] == "demo-native")
            #expect(approvals == (try await phone.inbox()))
        }
    }

    @Test("an inbox long-poll with nothing to deliver answers an empty inbox once its wait is over")
    func inboxLongPollTimesOut() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let started = ContinuousClock.now
            let answer = Answer<[[String: String]]>()
            let waiting = Task { answer.give(try await phone.inbox(wait: 1)) }
            // Checked for 20 s, so that a wait that never ends fails here instead of hanging the suite.
            try await eventually("the long-poll answered") { answer.given != nil }
            try await waiting.value
            #expect(answer.given == [])
            #expect(started.duration(to: .now) >= .seconds(1), "it waited for something to deliver")
        }
    }

    @Test("inbox requests need a fresh device signature: one missing, over something else, or timed ten minutes before or after is refused",
          arguments: ["missing", "wrong", "stale", "ahead"])
    func inboxNeedsSignature(kind: String) async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let path = "/v1/devices/\(phone.deviceID)/pending"
            var timestamp = Int(server.clock.now().timeIntervalSince1970)
            if kind == "stale" { timestamp -= 600 }
            if kind == "ahead" { timestamp += 600 }
            let message = kind == "wrong" ? "something else" : DeviceProof.requestMessage(method: "GET", pathWithQuery: path, timestamp: timestamp)
            let signature = try await phone.phone.authenticator.signWithDeviceKey(message)
            var headers = HTTPHeaders()
            if kind != "missing" {
                headers.add(name: "Countersign-Device", value: phone.deviceID)
                headers.add(name: "Countersign-Timestamp", value: String(timestamp))
                headers.add(name: "Countersign-Signature", value: signature)
            }
            let response = try await server.request(.GET, path, headers: headers)
            #expect(response.status == .unauthorized)
        }
    }
}

extension MobileApproveStartTests {
    @Test("a revoked device's inbox is 403 device_revoked, though its request is signed with its key")
    func revokedDeviceInbox() async throws {
        try await TestServer.run { server in
            let (phone, _) = try await pendingApproval(server)
            #expect(try await server.admin(.POST, "devices/\(phone.deviceID)/revoke").status == .ok)
            await expectRefusal(403, ErrorCode.deviceRevoked) { _ = try await phone.inbox() }
        }
    }

    /// `countersign migrate --remove-demo-application` removes an application and leaves its approvals.
    @Test("an approval whose application is gone is left out of its phone's inbox, which still answers")
    func approvalOfRemovedApplication() async throws {
        try await TestServer.run { server in
            let (phone, payload) = try await pendingApproval(server)
            let sql = server.sql
            try await sql.raw("UPDATE approvals SET application_id = 'app_removed' WHERE id = \(bind: payload["approval_id"]!)").run()
            #expect(try await phone.inbox().isEmpty)
        }
    }

    @Test("an inbox request signed once is answered once; the same request again is refused as a replay")
    func inboxRequestReplayed() async throws {
        try await TestServer.run { server in
            let (phone, payload) = try await pendingApproval(server)
            let path = "/v1/devices/\(phone.deviceID)/pending"
            let timestamp = Int(server.clock.now().timeIntervalSince1970)
            var headers = HTTPHeaders()
            headers.add(name: "Countersign-Device", value: phone.deviceID)
            headers.add(name: "Countersign-Timestamp", value: String(timestamp))
            headers.add(name: "Countersign-Signature", value: try await phone.phone.authenticator.signWithDeviceKey(
                DeviceProof.requestMessage(method: "GET", pathWithQuery: path, timestamp: timestamp)))
            let answered = try await server.request(.GET, path, headers: headers)
            #expect(answered.status == .ok)
            #expect(answered.body.string.contains(payload["approval_id"]!))
            let replayed = try await server.request(.GET, path, headers: headers)
            #expect(replayed.status == .unauthorized)
            #expect(replayed.body.string.contains("signature_replayed"))
        }
    }

    @Test("a signed request replayed to a server whose clock is behind the one that swept its record is refused")
    func replayAfterSweepOnAnotherClock() async throws {
        try await TestServer.run(adjust: { $0.sweepInterval = 0.02 }) { server in
            let (phone, _) = try await pendingApproval(server)
            let path = "/v1/devices/\(phone.deviceID)/pending"
            func inbox(signedAt timestamp: Int) async throws -> HTTPHeaders {
                var headers = HTTPHeaders()
                headers.add(name: "Countersign-Device", value: phone.deviceID)
                headers.add(name: "Countersign-Timestamp", value: String(timestamp))
                headers.add(name: "Countersign-Signature", value: try await phone.phone.authenticator.signWithDeviceKey(
                    DeviceProof.requestMessage(method: "GET", pathWithQuery: path, timestamp: timestamp)))
                return headers
            }
            // A minute after the phone's first inbox call, a request signed by a phone clock almost two
            // minutes ahead: fresh to a server clock until four minutes from now.
            server.clock.advance(by: 60)
            let signed = try await inbox(signedAt: Int(server.clock.now().timeIntervalSince1970) + 119)
            #expect(try await server.request(.GET, path, headers: signed).status == .ok)

            // Four minutes and a second on, the sweep removes what no clock of its own could still take as
            // fresh (the first call's record, at least).
            server.clock.advance(by: 241)
            try await eventually("the first inbox call's record was removed") { try await server.count("used_device_signatures") <= 1 }

            // A clock 30 s behind the sweeper's (another instance's, or this one's stepped back) still
            // takes the timestamp as fresh.
            server.clock.advance(by: -30)
            let replayed = try await server.request(.GET, path, headers: signed)
            #expect(replayed.status == .unauthorized)
            #expect(replayed.body.string.contains("signature_replayed"))
        }
    }
}

/// What a task has answered, once it has.
private final class Answer<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)

    func give(_ answer: Value) {
        value.withLock { $0 = answer }
    }

    var given: Value? { value.withLock { $0 } }
}
