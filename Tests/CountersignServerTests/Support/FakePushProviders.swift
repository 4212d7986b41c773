import CountersignClient
import CountersignCore
import CountersignPushTesting
import CountersignServer
import Crypto
import Foundation
import NIOSSL
import Testing
import _CryptoExtras

/// Apple's and Google's push services played by protocol-checking fakes, with the credentials an
/// operator would copy from each console.
struct FakePushProviders {
    static let bundleID = "com.example.bank"
    static let appleKeyID = "KEY1234567"
    static let appleTeamID = "TEAM123456"
    static let firebaseProject = "countersign-bank"
    static let serviceAccountEmail = "push@countersign-bank.iam.gserviceaccount.com"
    /// RSA keys are slow to make: one for the whole suite.
    static let googleKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    /// The `.p8` key.
    let appleKey: P256.Signing.PrivateKey
    let apns: FakeAPNs
    let google: FakeGoogle

    /// Starts both fakes, runs `body`, and stops them.
    static func run(_ body: (FakePushProviders) async throws -> Void) async throws {
        let appleKey = P256.Signing.PrivateKey()
        let apns = try await FakeAPNs(
            keys: [FakeAPNs.Key(keyID: appleKeyID, teamID: appleTeamID, publicKeyPEM: appleKey.publicKey.pemRepresentation)],
            bundleIDs: [bundleID])
        let google = try await FakeGoogle(
            clientEmail: serviceAccountEmail, publicKeyPEM: googleKey.publicKey.pemRepresentation, project: firebaseProject)
        let providers = FakePushProviders(appleKey: appleKey, apns: apns, google: google)
        do {
            try await body(providers)
        } catch {
            await apns.stop()
            await google.stop()
            throw error
        }
        await apns.stop()
        await google.stop()
    }

    /// Runs `body` with a server configured for `channel` (`apns` or `fcm`) and Ada's phone registered on it.
    static func withPhone(
        on channel: String, adjust: (inout Configuration) -> Void = { _ in },
        _ body: (FakePushProviders, TestServer, RegisteredPhone) async throws -> Void
    ) async throws {
        try await run { providers in
            try await TestServer.run(adjust: adjust) { server in
                let apple = channel == "apns"
                try await server.configurePush(apple ? providers.apnsConfig : providers.fcmConfig)
                let phone = try await RegisteredPhone.register(
                    server, email: "ada@example.com", channel: channel, token: apple ? DeviceTokens.apple : DeviceTokens.firebase,
                    appID: apple ? bundleID : firebaseProject)
                try await body(providers, server, phone)
            }
        }
    }

    /// `POST /admin/v1/push-configs` for the Apple key, pointed at the fake and trusting its authority.
    var apnsConfig: JSONValue {
        [
            "type": "apns", "name": "Bank app (sandbox)", "bundle_id": .string(Self.bundleID), "key_id": .string(Self.appleKeyID),
            "team_id": .string(Self.appleTeamID), "environment": "sandbox", "private_key_pem": .string(appleKey.pemRepresentation),
            "endpoint": .string(apns.url), "ca_certificate_pem": .string(apns.certificateAuthority.rootCertificatePEM),
        ]
    }

    /// Google's JSON key file for the service account.
    var serviceAccount: JSONValue {
        [
            "type": "service_account", "project_id": .string(Self.firebaseProject), "private_key_id": "3f1c0e5b9a",
            "private_key": .string(Self.googleKey.pemRepresentation), "client_email": .string(Self.serviceAccountEmail),
            "client_id": "100000000000000000001", "token_uri": .string(google.tokenURI),
        ]
    }

    /// `POST /admin/v1/push-configs` for the Firebase service account, pointed at the fake and trusting
    /// its authority.
    var fcmConfig: JSONValue {
        [
            "type": "fcm", "name": "Bank app (Android)", "service_account": serviceAccount, "endpoint": .string(google.url),
            "ca_certificate_pem": .string(google.certificateAuthority.rootCertificatePEM),
        ]
    }

    /// Pieces of the keys the configurations carry, to look for where they must not be.
    var secretFragments: [String] {
        Self.fragments(of: appleKey) + Self.fragments(ofPEM: Self.googleKey.pemRepresentation)
    }

    /// Two 40-character pieces of a PEM key's middle and end (its first lines are the same for every key
    /// of a type). For an RSA key both lie in the private part.
    static func fragments(ofPEM pem: String) -> [String] {
        let body = pem.split(separator: "\n").dropFirst().dropLast().joined()
        return [String(body.dropFirst(body.count / 2).prefix(40)), String(body.suffix(40))]
    }

    /// A P-256 key's private scalar as base64, base64url and hex, and its PEM's pieces (which, for this
    /// key type, are mostly the public key).
    static func fragments(of key: P256.Signing.PrivateKey) -> [String] {
        fragments(ofSecret: key.rawRepresentation) + fragments(ofPEM: key.pemRepresentation)
    }

    /// Secret bytes as base64, base64url and hex.
    static func fragments(ofSecret secret: Data) -> [String] {
        let base64 = secret.base64EncodedString()
        let base64URL = base64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return [base64, base64URL, secret.map { String(format: "%02x", $0) }.joined()].map { String($0.prefix(40)) }
    }

    /// The `data` of the `index`th APNs request: what the app hands to the SDK.
    func apnsPayload(_ index: Int) throws -> [String: String] {
        let requests = apns.requests
        try #require(index < requests.count, "Apple has received \(requests.count) requests")
        let body = try #require(try JSONSerialization.jsonObject(with: requests[index].body) as? [String: Any])
        return try #require(body["data"] as? [String: String])
    }

    /// The `data` of the `index`th FCM message.
    func fcmPayload(_ index: Int) throws -> [String: String] {
        let messages = google.received
        try #require(index < messages.count, "Google has received \(messages.count) messages")
        guard case .object(let data) = try #require(messages[index].body["data"]) else {
            Issue.record("the FCM message has no data object")
            return [:]
        }
        return data.compactMapValues { if case .string(let text) = $0 { text } else { nil } }
    }
}

extension RegisteredPhone {
    /// Registers a phone whose pushes go through `channel` with `token`.
    static func register(
        _ server: TestServer, email: String, channel: String, token: String, appID: String?
    ) async throws -> RegisteredPhone {
        let client = server.client()
        await client.setPushToken(token, channel: channel, appID: appID)
        return try await register(server, email: email, client: client)
    }

    /// Approves with biometrics from a push payload the provider received.
    @discardableResult
    func approve(fromPush payload: [String: String]) async throws -> IdoResponse {
        let step = try await phone.client.startMobileApproveJourney(payload: payload, deviceID: deviceID, authenticator: phone.authenticator)
        #expect(step.journeyStepID == JourneyStepID.mobileBiometricsAuthentication)
        return try await phone.client.submitClientResponse(.clientInput, data: try await phone.biometricAnswer(to: step, as: email))
    }
}

/// Waits (up to 20 s) until `condition` holds; background work such as the push sender gets there on
/// its own. Fails the test when it never does.
func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
    for _ in 0..<400 {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    Issue.record("never happened: \(what)")
    throw CancellationError()
}
