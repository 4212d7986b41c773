import Crypto
import Foundation

/// Software P-256 keys persisted in one file with 0600 permissions: for Linux, tests and the
/// command-line phone. There is no biometric check; `requiresBiometrics` is recorded by the caller only.
public struct SoftwareKeyStore: KeyStore {
    private let file: KeyFile

    /// Keeps the keys in the file at `url`, created on first use.
    public init(url: URL) {
        self.file = KeyFile(url: url)
    }

    public func createKey(alias: String, requiresBiometrics: Bool) async throws -> any SigningKey {
        let key = P256.Signing.PrivateKey()
        try await file.write(alias, key.rawRepresentation)
        return SoftwareSigningKey(key: key)
    }

    public func key(alias: String) async throws -> (any SigningKey)? {
        guard let raw = try await file.read(alias) else { return nil }
        return SoftwareSigningKey(key: try P256.Signing.PrivateKey(rawRepresentation: raw))
    }

    public func deleteKey(alias: String) async throws {
        try await file.write(alias, nil)
    }

    public func moveKeys(_ newNames: [String: String]) async throws {
        try await file.move(newNames)
    }
}

struct SoftwareSigningKey: SigningKey {
    let key: P256.Signing.PrivateKey

    var publicKeyDER: Data { key.publicKey.derRepresentation }

    func sign(_ message: Data) async throws -> Data {
        try key.signature(for: message).derRepresentation
    }
}
