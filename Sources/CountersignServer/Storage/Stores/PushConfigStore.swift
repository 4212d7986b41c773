import CountersignCore
import Foundation

/// Every statement on `push_configs`. The table keeps one configuration per provider and app id (devices
/// are matched on it): a second one fails with a constraint violation.
struct PushConfigStore {
    static let table = "push_configs"
    let db: any SQLExecutor

    /// All configurations, oldest first.
    func all() async throws -> [PushConfigRecord] {
        try await db.all(PushConfigRecord.self, "SELECT * FROM push_configs ORDER BY created_at")
    }

    func find(_ id: String) async throws -> PushConfigRecord? {
        try await db.first(PushConfigRecord.self, "SELECT * FROM push_configs WHERE id = $1", id)
    }

    /// A digest that changes whenever a configuration is added, changed or removed. It covers the sealed
    /// key material, which every write seals anew under a fresh nonce, so two writes within one tick of the
    /// clock still differ (update times would not).
    func version() async throws -> String {
        let versions = try await db.all("SELECT id, sealed_secret FROM push_configs ORDER BY id").map { row in
            "\(try row.decode("id", as: String.self)):\(try row.decode("sealed_secret", as: String.self))"
        }
        return SecretDigest.hex(versions.joined(separator: ","))
    }

    func insert(_ config: PushConfigRecord) async throws {
        try await db.run("""
            INSERT INTO push_configs (
                id, provider, name, app_id, key_id, issuer, environment, endpoint, token_endpoint, ca_certificate_pem,
                sealed_secret, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
            """,
            config.id, config.provider, config.name, config.appID, config.keyID, config.issuer, config.environment,
            config.endpoint, config.tokenEndpoint, config.caCertificatePEM, config.sealedSecret, config.createdAt,
            config.updatedAt)
    }

    /// Writes every column of `config` (an absent optional clears its column).
    func update(_ config: PushConfigRecord) async throws {
        try await db.run("""
            UPDATE push_configs
            SET provider = $1, name = $2, app_id = $3, key_id = $4, issuer = $5, environment = $6, endpoint = $7,
                token_endpoint = $8, ca_certificate_pem = $9, sealed_secret = $10, created_at = $11, updated_at = $12
            WHERE id = $13
            """,
            config.provider, config.name, config.appID, config.keyID, config.issuer, config.environment, config.endpoint,
            config.tokenEndpoint, config.caCertificatePEM, config.sealedSecret, config.createdAt, config.updatedAt,
            config.id)
    }

    /// Deletes configuration `id`; returns whether it existed.
    func delete(_ id: String) async throws -> Bool {
        try await !db.all("DELETE FROM push_configs WHERE id = $1 RETURNING id", id).isEmpty
    }
}
