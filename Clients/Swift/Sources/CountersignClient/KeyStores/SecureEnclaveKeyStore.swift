#if canImport(LocalAuthentication) && canImport(CryptoKit)
import CryptoKit
import Foundation
import LocalAuthentication
import Security

/// Keys generated inside the Secure Enclave. Only the enclave's wrapped key blob is stored (in a 0600
/// file); it is useless off this device. Biometric keys sign only after Face ID / Touch ID succeeds.
public struct SecureEnclaveKeyStore: KeyStore {
    private let file: KeyFile

    public init(url: URL) {
        self.file = KeyFile(url: url)
    }

    public func createKey(alias: String, requiresBiometrics: Bool) async throws -> any SigningKey {
        var error: Unmanaged<CFError>?
        let flags: SecAccessControlCreateFlags = requiresBiometrics ? [.privateKeyUsage, .biometryCurrentSet] : [.privateKeyUsage]
        guard let access = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, flags, &error) else {
            throw error!.takeRetainedValue() as Error
        }
        let key = try SecureEnclave.P256.Signing.PrivateKey(accessControl: access)
        try await file.write(alias, key.dataRepresentation)
        return EnclaveSigningKey(key: key)
    }

    public func key(alias: String) async throws -> (any SigningKey)? {
        guard let blob = try await file.read(alias) else { return nil }
        let key = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: blob, authenticationContext: LAContext())
        return EnclaveSigningKey(key: key)
    }

    public func deleteKey(alias: String) async throws {
        try await file.write(alias, nil)
    }

    public func moveKeys(_ newNames: [String: String]) async throws {
        try await file.move(newNames)
    }
}

private struct EnclaveSigningKey: SigningKey, @unchecked Sendable {
    let key: SecureEnclave.P256.Signing.PrivateKey

    var publicKeyDER: Data { key.publicKey.derRepresentation }

    func sign(_ message: Data) async throws -> Data {
        try key.signature(for: message).derRepresentation
    }
}
#endif
