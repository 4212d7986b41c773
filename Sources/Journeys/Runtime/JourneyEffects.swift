import CountersignCore
import Foundation

/// Everything a journey does outside itself. The server implements it over its database and token
/// issuer; the interpreter stays free of storage and transport.
public protocol JourneyEffects: Sendable {
    /// The user with this external id, if one exists.
    func findUser(externalUserID: String) async throws -> UserContext?
    /// Creates a user; the id is assigned by the store.
    func createUser(externalUserID: String, email: String?) async throws -> UserContext
    /// Stores a biometric public key for a user, replacing an earlier key with the same key id.
    /// Returns the stored key's record id.
    func registerBiometricKey(_ registration: BiometricKeyRegistration) async throws -> String
    /// The user's active biometric key with this client-chosen id; nil when unknown or revoked, or
    /// when the device it belongs to was revoked.
    func activeBiometricKey(userID: String, publicKeyID: String) async throws -> VerifyingKey?
    /// Stores a device and returns the id the server assigned.
    func registerDevice(_ registration: DeviceRegistration) async throws -> String
    /// Signs the token a completed journey hands to its client.
    func issueToken(_ request: TokenRequest) async throws -> String
}

/// A biometric key a phone registered.
public struct BiometricKeyRegistration: Sendable {
    public let userID: String
    public let publicKeyID: String
    public let key: VerifyingKey
    public let os: String
}

/// A device a phone registered, proven by a signature of its device key.
public struct DeviceRegistration: Sendable {
    public let userID: String
    public let publicKey: VerifyingKey
    public let name: String
    public let model: String
    public let os: String
    public let pushChannel: PushChannel
    public let pushToken: String?
    public let pushAppID: String?
    /// Biometric keys registered in the same run, which become bound to this device.
    public let biometricKeyIDs: [String]
}

/// What a completed journey's token says.
public struct TokenRequest: Sendable {
    public let clientID: String
    public let user: UserContext
    public let amr: [String]
    public let authTime: Date?
    public let deviceID: String?
    public let journeyID: String
    public let approvalData: [String: JSONValue]?
}
