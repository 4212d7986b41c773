import SQLKit
import Foundation

/// Every statement on `enrollment_codes`.
struct EnrollmentCodeStore {
    static let table = "enrollment_codes"
    let sql: any SQLDatabase

    func insert(_ code: EnrollmentCodeRecord) async throws {
        try await sql.insert(code, into: Self.table).run()
    }

    /// The unused, unexpired code with this hash that `clientID` may redeem.
    func redeemable(codeHash: String, clientID: String, at now: Date) async throws -> EnrollmentCodeRecord? {
        try await sql.raw("""
            SELECT * FROM \(name: Self.table)
            WHERE code_hash = \(bind: codeHash) AND used_at IS NULL AND expires_at > \(bind: now)
              AND (client_id IS NULL OR client_id = \(bind: clientID))
              AND application_id = (SELECT application_id FROM \(name: ClientStore.table) WHERE id = \(bind: clientID))
            """).first(decoding: EnrollmentCodeRecord.self)
    }

    /// Marks the code used; false when it was used meanwhile (by a registration running alongside).
    func markUsed(_ id: String, at now: Date) async throws -> Bool {
        try await !sql.raw("""
            UPDATE \(name: Self.table) SET used_at = \(bind: now) WHERE id = \(bind: id) AND used_at IS NULL RETURNING id
            """).all().isEmpty
    }
}
