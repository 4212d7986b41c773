import CountersignClient
import CountersignCore
import Crypto
import Foundation
import Testing

@Suite("Authenticator and the software key store")
struct AuthenticatorTests {
    @Test("a transaction whose challenge differs from the details shown is refused before anything is signed")
    func challengeMismatch() async throws {
        let keys = try KeysOnDisk()
        let authenticator = Authenticator(keyStore: SoftwareKeyStore(url: keys.url))
        _ = try await authenticator.registerNativeBiometrics(userIdentifier: "ada@example.com")
        try await authenticator.keepRegisteredKeys(userIdentifier: "ada@example.com")
        let shown = ["amount": "10.00", "currency": "EUR", "payee": "Bob"]
        let nonce = LenientBase64.urlEncoded(Data(repeating: 7, count: 32))
        let challenge = try #require(TransactionChallenge.derive(approvalData: try ApprovalData(shown), nonceBase64URL: nonce))
        let tampered = try #require(TransactionChallenge.derive(
            approvalData: try ApprovalData(shown.merging(["amount": "10000.00"]) { $1 }), nonceBase64URL: nonce))

        await #expect(throws: CountersignClientError.challengeMismatch) {
            try await authenticator.approvalNativeBiometrics(
                userIdentifier: "ada@example.com", approvalData: shown, nonce: nonce, challenge: tampered)
        }
        let input = try await authenticator.approvalNativeBiometrics(
            userIdentifier: "ada@example.com", approvalData: shown, nonce: nonce, challenge: challenge)
        #expect(input["userIdentifier"] == "ada@example.com")
    }

    @Test("a backend client's request whose challenge differs from the details and binding message shown is refused before anything is signed")
    func authorizationRequestMismatch() async throws {
        let keys = try KeysOnDisk()
        let authenticator = Authenticator(keyStore: SoftwareKeyStore(url: keys.url))
        _ = try await authenticator.registerNativeBiometrics(userIdentifier: "ada@example.com")
        try await authenticator.keepRegisteredKeys(userIdentifier: "ada@example.com")
        let details: [JSONValue] = [["type": "payment_initiation", "instructedAmount": ["currency": "EUR", "amount": "10.00"]]]
        let nonce = [UInt8](repeating: 7, count: 32)
        func challenge(_ bindingMessage: String) -> String {
            AuthorizationRequestChallenge.derive(
                signedObject: AuthorizationRequestChallenge.signedObject(authorizationDetails: details, bindingMessage: bindingMessage),
                nonce: nonce)
        }

        await #expect(throws: CountersignClientError.challengeMismatch) {
            try await authenticator.authorizationRequestNativeBiometrics(
                userIdentifier: "ada@example.com", authorizationDetails: details, bindingMessage: "Pay Bob 10 EUR",
                nonce: LenientBase64.urlEncoded(nonce), challenge: challenge("Pay Mallory 10 EUR"))
        }
        let input = try await authenticator.authorizationRequestNativeBiometrics(
            userIdentifier: "ada@example.com", authorizationDetails: details, bindingMessage: "Pay Bob 10 EUR",
            nonce: LenientBase64.urlEncoded(nonce), challenge: challenge("Pay Bob 10 EUR"))
        #expect(input["userIdentifier"] == "ada@example.com")
        // The same request's challenge is no sign-in challenge.
        await #expect(throws: CountersignClientError.notAnAuthenticationChallenge) {
            try await authenticator.authenticateNativeBiometrics(userIdentifier: "ada@example.com", challenge: challenge("Pay Bob 10 EUR"))
        }
    }

    @Test("a nonce that is not 32 bytes written as the server writes them gets no signature, though its challenge matches: it could never verify as evidence",
          arguments: [
            LenientBase64.urlEncoded([UInt8](repeating: 7, count: 1)), LenientBase64.urlEncoded([UInt8](repeating: 7, count: 16)),
            Data(repeating: 0xFB, count: 32).base64EncodedString(), LenientBase64.urlEncoded([UInt8](repeating: 7, count: 32)) + "=",
          ])
    func nonceNotAsTheServerWritesIt(nonce: String) async throws {
        let keys = try KeysOnDisk()
        let authenticator = Authenticator(keyStore: SoftwareKeyStore(url: keys.url))
        _ = try await authenticator.registerNativeBiometrics(userIdentifier: "ada@example.com")
        try await authenticator.keepRegisteredKeys(userIdentifier: "ada@example.com")
        let shown = ["amount": "10.00", "currency": "EUR", "payee": "Bob"]
        let bytes = try #require(LenientBase64.decode(nonce))
        let challenge = TransactionChallenge.derive(approvalData: try ApprovalData(shown), nonce: Array(bytes))
        await #expect(throws: CountersignClientError.challengeMismatch) {
            try await authenticator.approvalNativeBiometrics(
                userIdentifier: "ada@example.com", approvalData: shown, nonce: nonce, challenge: challenge)
        }
    }

    @Test("a sign-in step that sends a transaction's challenge gets no signature: it would verify as evidence of a payment never shown")
    func transactionChallengeAsSignIn() async throws {
        let keys = try KeysOnDisk()
        let authenticator = Authenticator(keyStore: SoftwareKeyStore(url: keys.url))
        _ = try await authenticator.registerNativeBiometrics(userIdentifier: "ada@example.com")
        try await authenticator.keepRegisteredKeys(userIdentifier: "ada@example.com")
        let payment = try ApprovalData(["amount": "10000.00", "currency": "EUR", "payee": "Mallory"])
        let nonce = LenientBase64.urlEncoded(Data(repeating: 9, count: 32))
        let challenge = try #require(TransactionChallenge.derive(approvalData: payment, nonceBase64URL: nonce))

        await #expect(throws: CountersignClientError.notAnAuthenticationChallenge) {
            try await authenticator.authenticateNativeBiometrics(userIdentifier: "ada@example.com", challenge: challenge)
        }
        #expect(AuthenticationChallenge.isAuthentication(AuthenticationChallenge.make()))
    }

    @Test("keys are kept in a file only its owner can read, and come back the same after a restart")
    func keysPersist() async throws {
        let keys = try KeysOnDisk()
        let first = Authenticator(keyStore: SoftwareKeyStore(url: keys.url))
        let registration = try await first.registerNativeBiometrics(userIdentifier: "ada@example.com")
        try await first.keepRegisteredKeys(userIdentifier: "ada@example.com")

        let permissions = try FileManager.default.attributesOfItem(atPath: keys.url.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        let again = Authenticator(keyStore: SoftwareKeyStore(url: keys.url))
        let signed = try await again.authenticateNativeBiometrics(userIdentifier: "ada@example.com", challenge: AuthenticationChallenge.make())
        #expect(signed["publicKeyId"] == registration["publicKeyId"])
        await #expect(throws: CountersignClientError.keyNotFound(alias: "countersign.biometric.bob@example.com")) {
            try await again.authenticateNativeBiometrics(userIdentifier: "bob@example.com", challenge: AuthenticationChallenge.make())
        }
    }

    @Test("a registration's new keys sign nothing until it is kept: one that fails or is left halfway leaves the phone signing with the keys it had, and its keys are never kept later")
    func keysKeptOnlyOnSuccess() async throws {
        let keys = try KeysOnDisk()
        let authenticator = Authenticator(keyStore: SoftwareKeyStore(url: keys.url))
        let push = PushRegistration(channel: "inbox", token: nil, appID: nil)
        let firstBiometric = try await authenticator.registerNativeBiometrics(userIdentifier: "ada@example.com")
        let firstDevice = try await authenticator.registerDevice(challenge: "c1", name: "Phone", model: "Test", push: push)
        try await authenticator.keepRegisteredKeys(userIdentifier: "ada@example.com")

        // A second registration makes new keys, and its journey fails: nothing calls keepRegisteredKeys.
        let secondBiometric = try await authenticator.registerNativeBiometrics(userIdentifier: "ada@example.com")
        _ = try await authenticator.registerDevice(challenge: "c2", name: "Phone", model: "Test", push: push)
        #expect(secondBiometric["publicKeyId"] != firstBiometric["publicKeyId"])

        // The app restarted: it signs with the first registration's keys, and the second's are never kept.
        let again = Authenticator(keyStore: SoftwareKeyStore(url: keys.url))
        let signIn = try await again.authenticateNativeBiometrics(userIdentifier: "ada@example.com", challenge: AuthenticationChallenge.make())
        #expect(signIn["publicKeyId"] == firstBiometric["publicKeyId"])
        #expect(try await Self.deviceKeySigned("proof", of: again, verifiesWith: firstDevice))
        await #expect(throws: CountersignClientError.noRegisteredKeys) { try await again.keepRegisteredKeys(userIdentifier: "ada@example.com") }

        // A later registration that makes only a biometric key keeps only that: the device key left waiting
        // by the failed one does not replace the device key in use.
        let third = try await again.registerNativeBiometrics(userIdentifier: "ada@example.com")
        try await again.keepRegisteredKeys(userIdentifier: "ada@example.com")
        let afterKeep = try await again.authenticateNativeBiometrics(userIdentifier: "ada@example.com", challenge: AuthenticationChallenge.make())
        #expect(afterKeep["publicKeyId"] == third["publicKeyId"])
        #expect(try await Self.deviceKeySigned("proof", of: again, verifiesWith: firstDevice))

        // The key file is replaced whole at each change: it stays private, with nothing left beside it.
        let permissions = try FileManager.default.attributesOfItem(atPath: keys.url.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: keys.directory.path) == ["keys.json"])
    }

    @Test("a failed registration's waiting keys are deleted when discarded, after a restart too, and the keys in use go on signing")
    func waitingKeysDiscarded() async throws {
        let keys = try KeysOnDisk()
        let authenticator = Authenticator(keyStore: SoftwareKeyStore(url: keys.url))
        let push = PushRegistration(channel: "inbox", token: nil, appID: nil)
        let first = try await authenticator.registerNativeBiometrics(userIdentifier: "ada@example.com")
        let firstDevice = try await authenticator.registerDevice(challenge: "c1", name: "Phone", model: "Test", push: push)
        try await authenticator.keepRegisteredKeys(userIdentifier: "ada@example.com")
        let stored = try Self.aliases(in: keys)

        // Two registrations fail: one the app saw fail, one left by an app that was killed.
        _ = try await authenticator.registerNativeBiometrics(userIdentifier: "bob@example.com")
        _ = try await authenticator.registerDevice(challenge: "c2", name: "Phone", model: "Test", push: push)
        try await authenticator.discardRegisteredKeys(userIdentifier: "bob@example.com")
        #expect(try Self.aliases(in: keys) == stored)
        _ = try await authenticator.registerNativeBiometrics(userIdentifier: "eve@example.com")
        let restarted = Authenticator(keyStore: SoftwareKeyStore(url: keys.url))
        try await restarted.discardRegisteredKeys(userIdentifier: "eve@example.com")
        #expect(try Self.aliases(in: keys) == stored)
        await #expect(throws: CountersignClientError.noRegisteredKeys) { try await authenticator.keepRegisteredKeys(userIdentifier: "bob@example.com") }

        let signIn = try await restarted.authenticateNativeBiometrics(userIdentifier: "ada@example.com", challenge: AuthenticationChallenge.make())
        #expect(signIn["publicKeyId"] == first["publicKeyId"])
        #expect(try await Self.deviceKeySigned("proof", of: restarted, verifiesWith: firstDevice))
    }

    /// The names of the keys in the key file.
    private static func aliases(in keys: KeysOnDisk) throws -> Set<String> {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: keys.url)) as? [String: Any])
        return Set(object.keys)
    }

    /// Whether the device key's signature of `message` verifies with the public key a `registerDevice` input gave.
    private static func deviceKeySigned(_ message: String, of authenticator: Authenticator, verifiesWith registration: JSONValue) async throws -> Bool {
        let publicKeyDER = try #require(registration["device_public_key"]?.stringValue.flatMap { Data(base64Encoded: $0) })
        let signature = try #require(Data(base64Encoded: try await authenticator.signWithDeviceKey(message)))
        return try P256.Signing.PublicKey(derRepresentation: publicKeyDER)
            .isValidSignature(try P256.Signing.ECDSASignature(derRepresentation: signature), for: Data(message.utf8))
    }
}

/// A key file in a directory of its own, removed when the test ends.
final class KeysOnDisk {
    let directory: URL
    var url: URL { directory.appendingPathComponent("keys.json") }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-sdk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }
}
