import Foundation

/// Where the phone keeps its private keys. On Apple platforms the Secure Enclave; elsewhere (Linux,
/// tests, the command-line phone) software keys in a file.
public protocol KeyStore: Sendable {
    /// Creates (or replaces) the key named `alias`. A key that `requiresBiometrics` signs only after the
    /// person passes the platform's biometric check.
    func createKey(alias: String, requiresBiometrics: Bool) async throws -> any SigningKey
    /// The key named `alias`, if there is one.
    func key(alias: String) async throws -> (any SigningKey)?
    /// Forgets the key named `alias`.
    func deleteKey(alias: String) async throws
    /// Renames keys, all at once or none: each key named by one of `newNames`' keys takes the name of
    /// its value, replacing the key of that name.
    func moveKeys(_ newNames: [String: String]) async throws
}

/// A P-256 private key that never leaves its store.
public protocol SigningKey: Sendable {
    /// The public key as SPKI DER.
    var publicKeyDER: Data { get }
    /// An ECDSA P-256 / SHA-256 signature of `message`, DER encoded.
    func sign(_ message: Data) async throws -> Data
}
