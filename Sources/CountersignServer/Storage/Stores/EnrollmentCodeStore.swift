import Foundation

/// Every statement on `enrollment_codes`.
struct EnrollmentCodeStore {
    static let table = "enrollment_codes"
    let db: any SQLExecutor

    func insert(_ code: EnrollmentCodeRecord) async throws {
        try await db.run("""
            INSERT INTO enrollment_codes (id, code_hash, external_user_id, application_id, client_id, created_at, expires_at, used_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """,
            code.id, code.codeHash, code.externalUserID, code.applicationID, code.clientID, code.createdAt, code.expiresAt,
            code.usedAt)
    }

    /// The unused, unexpired code with this hash that `clientID` may redeem.
    func redeemable(codeHash: String, clientID: String, at now: Date) async throws -> EnrollmentCodeRecord? {
        try await db.first(EnrollmentCodeRecord.self, """
            SELECT * FROM enrollment_codes
            WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2
              AND (client_id IS NULL OR client_id = $3)
              AND application_id = (SELECT application_id FROM clients WHERE id = $3)
            """, codeHash, now, clientID)
    }

    /// Marks the code used; false when it was used meanwhile (by a registration running alongside).
    func markUsed(_ id: String, at now: Date) async throws -> Bool {
        try await !db.all("UPDATE enrollment_codes SET used_at = $1 WHERE id = $2 AND used_at IS NULL RETURNING id", now, id).isEmpty
    }

    /// Marks every unused code of `externalUserID` for `applicationID` used: none of them enrolls a phone now.
    func voidUnused(externalUserID: String, applicationID: String, at now: Date) async throws {
        try await db.run(
            "UPDATE enrollment_codes SET used_at = $1 WHERE external_user_id = $2 AND application_id = $3 AND used_at IS NULL",
            now, externalUserID, applicationID)
    }
}
