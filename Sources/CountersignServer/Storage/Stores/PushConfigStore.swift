import CountersignCore
import SQLKit
import Foundation

/// Every statement on `push_configs`. The table keeps one configuration per provider and app id (devices
/// are matched on it): a second one fails with a constraint violation.
struct PushConfigStore {
    static let table = "push_configs"
    let sql: any SQLDatabase

    /// All configurations, oldest first.
    func all() async throws -> [PushConfigRecord] {
        try await sql.raw("SELECT * FROM \(name: Self.table) ORDER BY created_at").all(decoding: PushConfigRecord.self)
    }

    func find(_ id: String) async throws -> PushConfigRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: id)").first(decoding: PushConfigRecord.self)
    }

    /// A digest that changes whenever a configuration is added, changed or removed. It covers the sealed
    /// key material, which every write seals anew under a fresh nonce, so two writes within one tick of the
    /// clock still differ (update times would not).
    func version() async throws -> String {
        struct Version: Decodable {
            let id: String
            let sealed_secret: String
        }
        let versions = try await sql.raw("SELECT id, sealed_secret FROM \(name: Self.table) ORDER BY id").all(decoding: Version.self)
        return SecretDigest.hex(versions.map { "\($0.id):\($0.sealed_secret)" }.joined(separator: ","))
    }

    func insert(_ config: PushConfigRecord) async throws {
        try await sql.insert(config, into: Self.table).run()
    }

    func update(_ config: PushConfigRecord) async throws {
        try await sql.update(Self.table).set(model: config, nilEncodingStrategy: .asNil).where("id", .equal, config.id).run()
    }

    /// Deletes configuration `id`; returns whether it existed.
    func delete(_ id: String) async throws -> Bool {
        try await !sql.raw("DELETE FROM \(name: Self.table) WHERE id = \(bind: id) RETURNING id").all().isEmpty
    }
}
