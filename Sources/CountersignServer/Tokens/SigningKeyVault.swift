import Foundation

/// The token signing keys as the issuer uses them: sealed with the master key in the database (each
/// bound to its `kid`), open only in memory.
struct SigningKeyVault: Sendable {
    let storage: Storage
    let secrets: SecretBox

    /// The key that signs at `now`, opened.
    func active(at now: Date) async throws -> SigningKeyRecord? {
        try await storage.signingKeys.active(at: now).map(open)
    }

    /// The keys not retired or retired after `cutoff`, newest first, opened.
    func published(retiredAfter cutoff: Date) async throws -> [SigningKeyRecord] {
        try await storage.signingKeys.published(retiredAfter: cutoff).map(open)
    }

    func insert(_ key: SigningKeyRecord) async throws {
        try await storage.signingKeys.insert(try seal(key))
    }

    /// Adds `key` and retires every other key as it activates, in the caller's `transaction`.
    func rotate(to key: SigningKeyRecord, in transaction: Storage) async throws {
        let sealed = try seal(key)
        let store = transaction.signingKeys
        try await store.retireAll(at: key.activatesAt)
        try await store.insert(sealed)
    }

    private func seal(_ key: SigningKeyRecord) throws -> SigningKeyRecord {
        key.withPrivateKey(try secrets.seal(key.privateKeyPEM, boundTo: key.id))
    }

    private func open(_ key: SigningKeyRecord) throws -> SigningKeyRecord {
        key.withPrivateKey(try secrets.open(key.privateKeyPEM, boundTo: key.id))
    }
}
