import SQLKit
import Foundation

/// Every statement on `server_secrets` (server-wide secrets such as the web OTP key, sealed) and
/// `admin_credentials` (the generated admin key's SHA-256 hash).
struct ServerSecretStore {
    static let table = "server_secrets"
    static let adminCredentialTable = "admin_credentials"
    let sql: any SQLDatabase

    /// The secret `id`, base64.
    func value(of id: String) async throws -> String? {
        try await sql.raw("SELECT value FROM \(name: Self.table) WHERE id = \(bind: id)").first(decodingColumn: "value", as: String.self)
    }

    /// Stores a new secret; one already stored under `id` fails with a constraint violation.
    func insert(_ id: String, value: String) async throws {
        try await sql.raw("INSERT INTO \(name: Self.table) (id, value) VALUES (\(bind: id), \(bind: value))").run()
    }

    /// The stored admin key hash, if one was generated (at the first start, under `PostgresStartupLock`).
    func adminKeyHash() async throws -> String? {
        try await sql.raw("SELECT key_hash FROM \(name: Self.adminCredentialTable) LIMIT 1")
            .first(decodingColumn: "key_hash", as: String.self)
    }

    func insertAdminKeyHash(_ hash: String, id: String, at now: Date) async throws {
        try await sql.raw("""
            INSERT INTO \(name: Self.adminCredentialTable) (id, key_hash, created_at) VALUES (\(bind: id), \(bind: hash), \(bind: now))
            """).run()
    }
}
