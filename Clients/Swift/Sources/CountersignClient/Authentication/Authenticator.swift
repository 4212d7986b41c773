import CountersignCore
import Crypto
import Foundation

/// The phone side of the biometric steps: makes the keys, signs the challenges, and builds each step's
/// client input exactly as the server expects it.
///
/// A registration's new keys wait under names of their own until `keepRegisteredKeys(userIdentifier:)`,
/// which the app calls once the registration journey has succeeded: a registration that fails or is left
/// halfway leaves the keys the phone signs with as they were. Only keys this authenticator made are kept,
/// never those a registration left in an earlier run of the app.
///
/// ```swift
/// let authenticator = Authenticator(keyStore: SoftwareKeyStore(url: keysFile))
/// let input = try await authenticator.authenticateNativeBiometrics(userIdentifier: "ada@example.com", challenge: challenge)
/// let step = try await client.submitClientResponse(.clientInput, data: input)
/// ```
public struct Authenticator: Sendable {
    private let keyStore: any KeyStore
    private let osName: String
    /// The keys this authenticator's registration calls made and that are not kept yet.
    private let pending = PendingKeys()

    public init(keyStore: any KeyStore, osName: String = Authenticator.platformName) {
        self.keyStore = keyStore
        self.osName = osName
    }

    /// Creates the user's new biometric key, kept once the registration succeeds; returns the
    /// `mobile_biometrics_registration` input `{publicKey, publicKeyId, os, keyType}`.
    public func registerNativeBiometrics(userIdentifier: String) async throws -> JSONValue {
        let key = try await createPendingKey(Self.biometricAlias(userIdentifier), requiresBiometrics: true)
        return [
            "publicKey": .string(key.publicKeyDER.base64EncodedString()),
            "publicKeyId": .string(Self.publicKeyID(of: key)),
            "os": .string(osName),
            "keyType": "ec",
        ]
    }

    /// Signs a sign-in's `challenge` with the user's biometric key; returns the
    /// `mobile_biometrics_authentication` input `{publicKeyId, signedChallenge, userIdentifier}`. Refuses a
    /// challenge that is not a sign-in's (`AuthenticationChallenge`): a transaction's challenge is signed
    /// only through `approvalNativeBiometrics`, after the person has seen its details.
    public func authenticateNativeBiometrics(userIdentifier: String, challenge: String) async throws -> JSONValue {
        guard AuthenticationChallenge.isAuthentication(challenge) else { throw CountersignClientError.notAnAuthenticationChallenge }
        return try await signWithBiometricKey(userIdentifier: userIdentifier, challenge: challenge)
    }

    /// The biometric step's input: `challenge` signed with the user's biometric key.
    private func signWithBiometricKey(userIdentifier: String, challenge: String) async throws -> JSONValue {
        let key = try await biometricKey(for: userIdentifier)
        let signature = try await key.sign(Data(challenge.utf8))
        return [
            "publicKeyId": .string(Self.publicKeyID(of: key)),
            "signedChallenge": .string(signature.base64EncodedString()),
            "userIdentifier": .string(userIdentifier),
        ]
    }

    /// Signs a transaction: recomputes the challenge from the details the person is shown and refuses
    /// to sign when it differs from the server's. What is shown is what is signed.
    public func approvalNativeBiometrics(
        userIdentifier: String, approvalData: [String: String], nonce: String, challenge: String
    ) async throws -> JSONValue {
        let data = try ApprovalData(approvalData)
        guard let expected = TransactionChallenge.derive(approvalData: data, nonceBase64URL: nonce),
            ConstantTime.equals(Array(expected.utf8), Array(challenge.utf8))
        else { throw CountersignClientError.challengeMismatch }
        return try await signWithBiometricKey(userIdentifier: userIdentifier, challenge: challenge)
    }

    /// Signs a backend client's request (OpenID CIBA): recomputes the challenge from the authorization
    /// details and binding message the person is shown, and refuses to sign when it differs from the
    /// server's.
    public func authorizationRequestNativeBiometrics(
        userIdentifier: String, authorizationDetails: [JSONValue], bindingMessage: String, nonce: String, challenge: String
    ) async throws -> JSONValue {
        let signed = AuthorizationRequestChallenge.signedObject(authorizationDetails: authorizationDetails, bindingMessage: bindingMessage)
        guard let nonceBytes = TransactionChallenge.nonceBytes(of: nonce),
            ConstantTime.equals(Array(AuthorizationRequestChallenge.derive(signedObject: signed, nonce: nonceBytes).utf8), Array(challenge.utf8))
        else { throw CountersignClientError.challengeMismatch }
        return try await signWithBiometricKey(userIdentifier: userIdentifier, challenge: challenge)
    }

    /// Creates the new device key, kept once the registration succeeds, and proves it by signing
    /// `challenge`; returns the `device_registration` input.
    public func registerDevice(challenge: String, name: String, model: String, push: PushRegistration) async throws -> JSONValue {
        let key = try await createPendingKey(Self.deviceAlias, requiresBiometrics: false)
        let signature = try await key.sign(Data(challenge.utf8))
        return [
            "device_public_key": .string(key.publicKeyDER.base64EncodedString()),
            "signature": .string(signature.base64EncodedString()),
            "name": .string(name),
            "model": .string(model),
            "os": .string(osName),
            "push": push.json,
        ]
    }

    /// Makes the keys of the registration that has just succeeded (its journey answered `action:success`)
    /// the ones the phone signs with, in one write: the user's biometric key and the device key, each when
    /// this authenticator made one. Until then the phone goes on signing with the keys it had. Throws
    /// `noRegisteredKeys` when it made neither.
    public func keepRegisteredKeys(userIdentifier: String) async throws {
        let made = await pending.made(among: [Self.biometricAlias(userIdentifier), Self.deviceAlias])
        guard !made.isEmpty else { throw CountersignClientError.noRegisteredKeys }
        try await keyStore.moveKeys(Dictionary(uniqueKeysWithValues: made.map { (Self.waitingAlias(of: $0), $0) }))
        await pending.forget(made)
    }

    /// Deletes the keys a registration for `userIdentifier` left waiting, when its journey failed or was
    /// abandoned (this run of the app's, or an earlier one's): never kept, they would stay in the key store.
    /// The keys the phone signs with are left as they are. Call it when no other registration of this
    /// phone is under way: the device key waits under one name for all of them.
    public func discardRegisteredKeys(userIdentifier: String) async throws {
        let aliases = [Self.biometricAlias(userIdentifier), Self.deviceAlias]
        for alias in aliases { try await keyStore.deleteKey(alias: Self.waitingAlias(of: alias)) }
        await pending.forget(aliases)
    }

    /// A new key under the name where it waits until kept as `alias`.
    private func createPendingKey(_ alias: String, requiresBiometrics: Bool) async throws -> any SigningKey {
        let key = try await keyStore.createKey(alias: Self.waitingAlias(of: alias), requiresBiometrics: requiresBiometrics)
        await pending.made(alias)
        return key
    }

    /// Signs `message` with the device key (device proofs and device-signed requests).
    public func signWithDeviceKey(_ message: String) async throws -> String {
        guard let key = try await keyStore.key(alias: Self.deviceAlias) else {
            throw CountersignClientError.keyNotFound(alias: Self.deviceAlias)
        }
        return try await key.sign(Data(message.utf8)).base64EncodedString()
    }

    private func biometricKey(for userIdentifier: String) async throws -> any SigningKey {
        let alias = Self.biometricAlias(userIdentifier)
        guard let key = try await keyStore.key(alias: alias) else { throw CountersignClientError.keyNotFound(alias: alias) }
        return key
    }

    static let deviceAlias = "countersign.device"

    /// Where a key made by a registration waits until the registration succeeds.
    static func waitingAlias(of alias: String) -> String {
        "countersign.pending." + alias
    }

    static func biometricAlias(_ userIdentifier: String) -> String {
        "countersign.biometric." + userIdentifier
    }

    /// A stable id for a key: base64url of the first 16 bytes of SHA-256 of its SPKI.
    static func publicKeyID(of key: any SigningKey) -> String {
        LenientBase64.urlEncoded(SHA256.hash(data: key.publicKeyDER).prefix(16))
    }

    /// The `os` value this build reports.
    public static var platformName: String {
        #if os(iOS)
        "iOS"
        #elseif os(macOS)
        "macOS"
        #elseif os(Android)
        "Android"
        #else
        "Linux"
        #endif
    }
}

/// The names an authenticator's registration calls made keys for, not kept yet (each key waits under
/// `Authenticator.waitingAlias(of:)` its name).
private actor PendingKeys {
    private var aliases: Set<String> = []

    func made(_ alias: String) {
        aliases.insert(alias)
    }

    /// Those of `candidates` this authenticator made a key for.
    func made(among candidates: [String]) -> [String] {
        candidates.filter(aliases.contains)
    }

    /// `aliases` wait no more: kept or discarded.
    func forget(_ aliases: [String]) {
        self.aliases.subtract(aliases)
    }
}
