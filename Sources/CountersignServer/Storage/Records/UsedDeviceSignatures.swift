import FluentSQL
import Foundation

/// Device signatures already accepted, each kept until it could no longer be fresh, so it is accepted
/// once. The expiry sweeper removes them after that.
enum UsedDeviceSignatures {
    static let schema = "used_device_signatures"

    /// Records `fingerprint` (SHA-256 hex of what was signed and the signature's identity) until
    /// `expiresAt`; a fingerprint already recorded fails with a constraint violation.
    static func record(_ fingerprint: String, until expiresAt: Date, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            INSERT INTO \(ident: schema) (id, expires_at) VALUES (\(bind: fingerprint), \(bind: expiresAt))
            """).run()
    }
}
