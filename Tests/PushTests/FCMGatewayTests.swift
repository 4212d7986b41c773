import AsyncHTTPClient
import CountersignCore
import CountersignPushTesting
import Crypto
import Foundation
import NIOSSL
import Push
import Testing
import _CryptoExtras

/// An FCM gateway wired to fake Google endpoints that share its clock.
struct FCMFixture {
    static let rsaKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let clientEmail = "push@countersign-test.iam.gserviceaccount.com"

    let clock: ManualClock
    let google: FakeGoogle
    let gateway: FCMGateway

    static func serviceAccount(tokenURI: String, dropping missing: [String] = []) -> Data {
        var fields = [
            "type": "service_account", "project_id": "countersign-test", "private_key_id": "key-1",
            "private_key": rsaKey.pemRepresentation, "client_email": clientEmail, "token_uri": tokenURI,
        ]
        for key in missing { fields[key] = nil }
        return try! JSONSerialization.data(withJSONObject: fields)
    }

    static func run(_ body: (FCMFixture) async throws -> Void) async throws {
        let clock = ManualClock()
        let google = try await FakeGoogle(
            clientEmail: clientEmail, publicKeyPEM: rsaKey.publicKey.pemRepresentation, project: "countersign-test", now: { clock.now() })
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([google.certificateAuthority.rootCertificate])
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        let account = try FCMServiceAccount(json: serviceAccount(tokenURI: google.tokenURI), sendBaseURL: google.url)
        let gateway = await FCMGateway(accounts: [account], client: client, now: { clock.now() })
        do {
            try await body(FCMFixture(clock: clock, google: google, gateway: gateway))
        } catch {
            try? await client.shutdown()
            await google.stop()
            throw error
        }
        try await client.shutdown()
        await google.stop()
    }

    func send() async -> DeliveryOutcome {
        let notification = PushNotification(
            title: "Countersign Demo", body: "Approve", payload: ["approval_id": "apr_1", "client_id": "demo-native"],
            expiresAt: clock.now().addingTimeInterval(300), collapseID: "apr_1")
        return await gateway.send(notification, to: PushTarget(deviceID: "dev_1", channel: .fcm, token: "fcm-token-1", appID: nil))
    }
}

@Suite("FCM HTTP v1 gateway against protocol-checking fake Google endpoints")
struct FCMGatewayTests {
    @Test("a send gets an access token with a verified RS256 assertion and posts a high-priority data message")
    func happyPath() async throws {
        try await FCMFixture.run { fixture in
            #expect(await fixture.send() == .delivered)
            let message = try #require(fixture.google.received.first)
            #expect(message.status == 200)
            #expect(message.project == "countersign-test")
            #expect(message.body["token"] == .string("fcm-token-1"))
            #expect(message.body["data"] == .object(["approval_id": .string("apr_1"), "client_id": .string("demo-native")]))
            guard case .object(let android)? = message.body["android"] else { Issue.record("no android block"); return }
            #expect(android["priority"] == .string("high"))
            #expect(android["ttl"] == .string("300s"))
        }
    }

    @Test("the access token is reused, then renewed shortly before it expires")
    func accessTokenReuse() async throws {
        try await FCMFixture.run { fixture in
            for _ in 0..<5 { #expect(await fixture.send() == .delivered) }
            #expect(fixture.google.issuedTokens.count == 1)
            fixture.clock.advance(by: 58 * 60)
            #expect(await fixture.send() == .delivered)
            #expect(fixture.google.issuedTokens.count == 1)
            fixture.clock.advance(by: 60)
            #expect(await fixture.send() == .delivered)
            #expect(fixture.google.issuedTokens.count == 2)
        }
    }

    @Test("sends arriving together wait for one access token")
    func concurrentSendsShareOneToken() async throws {
        try await FCMFixture.run { fixture in
            let outcomes = await withTaskGroup(of: DeliveryOutcome.self) { group in
                for _ in 0..<20 { group.addTask { await fixture.send() } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 == .delivered })
            #expect(fixture.google.issuedTokens.count == 1)
        }
    }

    @Test("Google's answers map to outcomes; a 401 renews the access token once and sends again")
    func outcomes() async throws {
        try await FCMFixture.run { fixture in
            fixture.google.script(
                ScriptedReply(status: 404, reason: "UNREGISTERED"), ScriptedReply(status: 429, reason: "QUOTA_EXCEEDED", retryAfter: 9),
                ScriptedReply(status: 503, reason: "UNAVAILABLE"), ScriptedReply(status: 401, reason: "UNAUTHENTICATED"),
                ScriptedReply(status: 403, reason: "SENDER_ID_MISMATCH"))
            #expect(await fixture.send() == .tokenInvalid(reason: "UNREGISTERED"))
            #expect(await fixture.send() == .retryable(reason: "QUOTA_EXCEEDED", retryAfter: 9))
            #expect(await fixture.send() == .retryable(reason: "UNAVAILABLE", retryAfter: nil))
            #expect(await fixture.send() == .rejected(reason: "SENDER_ID_MISMATCH"))
            #expect(fixture.google.issuedTokens.count == 2)
        }
    }

    @Test("a service account missing fields or with a bad key is refused, naming what is wrong")
    func badServiceAccount() {
        func refusal(_ json: Data) -> String? {
            do {
                _ = try FCMServiceAccount(json: json)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(refusal(FCMFixture.serviceAccount(tokenURI: "x", dropping: ["client_email", "token_uri"]))
            == "the service account is missing client_email, token_uri")
        #expect(refusal(Data("not json".utf8)) == "the service account must be the JSON key file from the Google Cloud console")
        var fields = try! JSONSerialization.jsonObject(with: FCMFixture.serviceAccount(tokenURI: "https://oauth2.example.com/token")) as! [String: Any]
        fields["private_key"] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
        #expect(refusal(try! JSONSerialization.data(withJSONObject: fields)) == "private_key is not an RSA private key in PEM")
        for uri in ["x", "http://10.0.0.5:8500/token", "file:///etc/passwd"] {
            #expect(refusal(FCMFixture.serviceAccount(tokenURI: uri)) == "token_uri must be an https URL")
        }
        #expect(refusal(FCMFixture.serviceAccount(tokenURI: "https://oauth2.example.com/token")) == nil)
    }
}
