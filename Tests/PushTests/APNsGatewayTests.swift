import AsyncHTTPClient
import CountersignCore
import CountersignPushTesting
import Crypto
import Foundation
import NIOSSL
import Push
import Synchronization
import Testing

/// A clock tests move by hand.
final class ManualClock: Sendable {
    private let current = Mutex(Date())
    func now() -> Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// An Apple signing key as the developer console hands it out, and what Apple knows of it.
struct AppleKey {
    let privateKey = P256.Signing.PrivateKey()
    let keyID: String
    let teamID = "TEAM123456"

    func configuration(bundleID: String, fake: FakeAPNs) throws -> APNsConfiguration {
        try APNsConfiguration(
            keyPEM: privateKey.pemRepresentation, keyID: keyID, teamID: teamID, bundleID: bundleID, environment: .sandbox,
            baseURL: fake.url)
    }

    var fakeKey: FakeAPNs.Key {
        FakeAPNs.Key(keyID: keyID, teamID: teamID, publicKeyPEM: privateKey.publicKey.pemRepresentation)
    }
}

/// An APNs gateway wired to a fake APNs that shares its clock.
struct APNsFixture {
    static let deviceToken = String(repeating: "ab", count: 32)
    static let notification = PushNotification(
        title: "Countersign Demo", body: "Approve the sign-in request",
        payload: ["approval_id": "apr_1", "client_id": "demo-native", "expires_at": "2026-11-21T10:05:00Z", "application": "Countersign Demo"],
        expiresAt: Date(timeIntervalSince1970: 1_795_000_000), collapseID: "apr_1")

    let clock: ManualClock
    let fake: FakeAPNs
    let gateway: APNsGateway
    let client: HTTPClient

    static func run(
        keys: [(AppleKey, String)] = [(AppleKey(keyID: "KEY1234567"), "com.example.bank")],
        _ body: (APNsFixture) async throws -> Void
    ) async throws {
        let clock = ManualClock()
        let fake = try await FakeAPNs(keys: keys.map(\.0.fakeKey), bundleIDs: Set(keys.map(\.1)), now: { clock.now() })
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([fake.certificateAuthority.rootCertificate])
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let gateway = await APNsGateway(
            configurations: try keys.map { try $0.0.configuration(bundleID: $0.1, fake: fake) }, client: client, now: { clock.now() })
        do {
            try await body(APNsFixture(clock: clock, fake: fake, gateway: gateway, client: client))
        } catch {
            try? await client.shutdown()
            await fake.stop()
            throw error
        }
        try await client.shutdown()
        await fake.stop()
    }

    func send(to token: String = deviceToken, appID: String? = "com.example.bank", _ notification: PushNotification = notification) async -> DeliveryOutcome {
        await gateway.send(notification, to: PushTarget(deviceID: "dev_1", channel: .apns, token: token, appID: appID))
    }
}

@Suite("APNs gateway against a protocol-checking fake over HTTP/2")
struct APNsGatewayTests {
    @Test("a send passes Apple's checks: HTTP/2, ES256 provider token, headers, payload with aps and data")
    func happyPath() async throws {
        try await APNsFixture.run { fixture in
            #expect(await fixture.send() == .delivered)
            let request = try #require(fixture.fake.requests.first)
            #expect(request.status == 200)
            #expect(request.httpVersion == 2)
            #expect(request.deviceToken == APNsFixture.deviceToken)
            #expect(request.headers["apns-topic"] == "com.example.bank")
            #expect(request.headers["apns-push-type"] == "alert")
            #expect(request.headers["apns-priority"] == "10")
            #expect(request.headers["apns-expiration"] == "1795000000")
            #expect(request.headers["apns-collapse-id"] == "apr_1")
            let payload = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
            let aps = try #require(payload["aps"] as? [String: Any])
            #expect((aps["alert"] as? [String: String])?["title"] == "Countersign Demo")
            #expect(aps["sound"] as? String == "default")
            #expect(payload["data"] as? [String: String] == APNsFixture.notification.payload)
        }
    }

    @Test("one provider token serves 100 sends and is renewed after 50 minutes")
    func providerTokenReuse() async throws {
        try await APNsFixture.run { fixture in
            for _ in 0..<100 { #expect(await fixture.send() == .delivered) }
            let tokens = Set(fixture.fake.requests.compactMap(\.providerToken))
            #expect(tokens.count == 1)
            fixture.clock.advance(by: 49 * 60)
            #expect(await fixture.send() == .delivered)
            #expect(Set(fixture.fake.requests.compactMap(\.providerToken)).count == 1)
            fixture.clock.advance(by: 60)
            #expect(await fixture.send() == .delivered)
            #expect(Set(fixture.fake.requests.compactMap(\.providerToken)).count == 2)
        }
    }

    @Test("sends arriving together share one provider token")
    func concurrentSendsShareOneToken() async throws {
        try await APNsFixture.run { fixture in
            let outcomes = await withTaskGroup(of: DeliveryOutcome.self) { group in
                for _ in 0..<20 { group.addTask { await fixture.send() } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 == .delivered })
            #expect(Set(fixture.fake.requests.compactMap(\.providerToken)).count == 1)
        }
    }

    @Test("the device's bundle id picks the Apple configuration and its key")
    func bundleSelection() async throws {
        let bank = AppleKey(keyID: "BANKKEY123")
        let wallet = AppleKey(keyID: "WALLETKEY1")
        try await APNsFixture.run(keys: [(bank, "com.example.bank"), (wallet, "com.example.wallet")]) { fixture in
            #expect(await fixture.send(appID: "com.example.wallet") == .delivered)
            #expect(await fixture.send(appID: "com.example.bank") == .delivered)
            #expect(await fixture.send(appID: "com.example.other") == .rejected(reason: "no APNs configuration for bundle id 'com.example.other'"))
            let requests = fixture.fake.requests
            #expect(requests.map { $0.headers["apns-topic"] } == ["com.example.wallet", "com.example.bank"])
            #expect(requests.allSatisfy { $0.status == 200 })
        }
    }

    @Test("a payload over 4096 bytes is refused before anything is sent")
    func payloadTooLarge() async throws {
        try await APNsFixture.run { fixture in
            var payload = APNsFixture.notification.payload
            payload["padding"] = String(repeating: "x", count: 4000)
            let big = PushNotification(title: "T", body: "B", payload: payload, expiresAt: Date(), collapseID: "apr_1")
            guard case .rejected(let reason) = await fixture.send(big) else { Issue.record("expected a refusal"); return }
            #expect(reason.hasPrefix("PayloadTooLarge"))
            #expect(fixture.fake.requests.isEmpty)
        }
    }

    @Test("Apple's answers map to outcomes: 410 invalidates the token, 429 and 500 are retried, other 4xx are final")
    func outcomes() async throws {
        try await APNsFixture.run { fixture in
            fixture.fake.script(
                ScriptedReply(status: 410, reason: "Unregistered"), ScriptedReply(status: 400, reason: "BadDeviceToken"),
                ScriptedReply(status: 429, reason: "TooManyRequests", retryAfter: 7), ScriptedReply(status: 500, reason: "InternalServerError"),
                ScriptedReply(status: 400, reason: "BadTopic"))
            #expect(await fixture.send() == .tokenInvalid(reason: "Unregistered"))
            #expect(await fixture.send() == .tokenInvalid(reason: "BadDeviceToken"))
            #expect(await fixture.send() == .retryable(reason: "TooManyRequests", retryAfter: 7))
            #expect(await fixture.send() == .retryable(reason: "InternalServerError", retryAfter: nil))
            #expect(await fixture.send() == .rejected(reason: "BadTopic"))
            #expect(await fixture.send(to: "not-hex") == .tokenInvalid(reason: "BadDeviceToken"))
            #expect(fixture.fake.requests.count == 5)
        }
    }

    @Test("ExpiredProviderToken renews the provider token once and sends again")
    func expiredProviderToken() async throws {
        try await APNsFixture.run { fixture in
            #expect(await fixture.send() == .delivered)
            fixture.clock.advance(by: 1)
            fixture.fake.script(ScriptedReply(status: 403, reason: "ExpiredProviderToken"))
            #expect(await fixture.send() == .delivered)
            let tokens = fixture.fake.requests.compactMap(\.providerToken)
            try #require(tokens.count == 3)
            #expect(tokens[0] == tokens[1])
            #expect(tokens[2] != tokens[1])
        }
    }

    @Test("a token signed by a key Apple does not know is refused by the fake")
    func unknownKey() async throws {
        let known = AppleKey(keyID: "KEY1234567")
        let clock = ManualClock()
        let fake = try await FakeAPNs(keys: [known.fakeKey], bundleIDs: ["com.example.bank"], now: { clock.now() })
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([fake.certificateAuthority.rootCertificate])
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        let impostor = AppleKey(keyID: "KEY1234567")
        let gateway = await APNsGateway(configurations: [try impostor.configuration(bundleID: "com.example.bank", fake: fake)], client: client)
        let outcome = await gateway.send(APNsFixture.notification, to: PushTarget(deviceID: "d", channel: .apns, token: APNsFixture.deviceToken, appID: nil))
        #expect(outcome == .rejected(reason: "InvalidProviderToken"))
        try await client.shutdown()
        await fake.stop()
    }
}
