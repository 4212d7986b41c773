import Foundation

/// Every statement on `signing_keys`.
struct SigningKeyStore {
    static let table = "signing_keys"
    let db: any SQLExecutor

    /// The key that signs at `now`: the newest one active then.
    func active(at now: Date) async throws -> SigningKeyRecord? {
        try await db.first(SigningKeyRecord.self, """
            SELECT * FROM signing_keys WHERE activates_at <= $1 AND (retired_at IS NULL OR retired_at > $1)
            ORDER BY activates_at DESC LIMIT 1
            """, now)
    }

    /// The keys not retired, or retired after `cutoff` (those rotated in and not signing yet among them),
    /// newest first.
    func published(retiredAfter cutoff: Date) async throws -> [SigningKeyRecord] {
        try await db.all(SigningKeyRecord.self, """
            SELECT * FROM signing_keys WHERE retired_at IS NULL OR retired_at > $1 ORDER BY activates_at DESC
            """, cutoff)
    }

    /// Every key, newest first.
    func all() async throws -> [SigningKeyRecord] {
        try await db.all(SigningKeyRecord.self, "SELECT * FROM signing_keys ORDER BY created_at DESC")
    }

    func insert(_ key: SigningKeyRecord) async throws {
        try await db.run("""
            INSERT INTO signing_keys (id, private_key_pem, created_at, activates_at, retired_at) VALUES ($1, $2, $3, $4, $5)
            """, key.id, key.privateKeyPEM, key.createdAt, key.activatesAt, key.retiredAt)
    }

    /// Retires, at `date`, every key not retired yet.
    func retireAll(at date: Date) async throws {
        try await db.run("UPDATE signing_keys SET retired_at = $1 WHERE retired_at IS NULL", date)
    }
}
