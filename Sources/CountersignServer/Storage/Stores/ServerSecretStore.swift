import Foundation

/// Every statement on `server_secrets` (server-wide secrets such as the web OTP key, sealed) and
/// `admin_credentials` (the generated admin key's SHA-256 hash).
struct ServerSecretStore {
    static let table = "server_secrets"
    static let adminCredentialTable = "admin_credentials"
    let db: any SQLExecutor

    /// The secret `id`, base64.
    func value(of id: String) async throws -> String? {
        try await db.first("SELECT value FROM server_secrets WHERE id = $1", id).map { try $0.decode("value", as: String.self) }
    }

    /// Stores a new secret; one already stored under `id` fails with a constraint violation.
    func insert(_ id: String, value: String) async throws {
        try await db.run("INSERT INTO server_secrets (id, value) VALUES ($1, $2)", id, value)
    }

    /// The stored admin key hash, if one was generated (at the first start, under `PostgresStartupLock`).
    func adminKeyHash() async throws -> String? {
        try await db.first("SELECT key_hash FROM admin_credentials LIMIT 1").map { try $0.decode("key_hash", as: String.self) }
    }

    func insertAdminKeyHash(_ hash: String, id: String, at now: Date) async throws {
        try await db.run("INSERT INTO admin_credentials (id, key_hash, created_at) VALUES ($1, $2, $3)", id, hash, now)
    }
}
