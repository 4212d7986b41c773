import SQLKit
import Foundation

/// Every statement on `signing_keys`.
struct SigningKeyStore {
    static let table = "signing_keys"
    let sql: any SQLDatabase

    /// The key that signs at `now`: the newest one active then.
    func active(at now: Date) async throws -> SigningKeyRecord? {
        try await sql.raw("""
            SELECT * FROM \(name: Self.table) WHERE activates_at <= \(bind: now) AND (retired_at IS NULL OR retired_at > \(bind: now))
            ORDER BY activates_at DESC LIMIT 1
            """).first(decoding: SigningKeyRecord.self)
    }

    /// The keys not retired, or retired after `cutoff` (those rotated in and not signing yet among them),
    /// newest first.
    func published(retiredAfter cutoff: Date) async throws -> [SigningKeyRecord] {
        try await sql.raw("""
            SELECT * FROM \(name: Self.table) WHERE retired_at IS NULL OR retired_at > \(bind: cutoff) ORDER BY activates_at DESC
            """).all(decoding: SigningKeyRecord.self)
    }

    /// Every key, newest first.
    func all() async throws -> [SigningKeyRecord] {
        try await sql.raw("SELECT * FROM \(name: Self.table) ORDER BY created_at DESC").all(decoding: SigningKeyRecord.self)
    }

    func insert(_ key: SigningKeyRecord) async throws {
        try await sql.insert(key, into: Self.table).run()
    }

    /// Retires, at `date`, every key not retired yet.
    func retireAll(at date: Date) async throws {
        try await sql.raw("UPDATE \(name: Self.table) SET retired_at = \(bind: date) WHERE retired_at IS NULL").run()
    }
}
