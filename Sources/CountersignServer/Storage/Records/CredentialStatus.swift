import SQLKit
import Foundation

/// Whether a device or biometric key may still be used.
enum CredentialStatus: String, Codable {
    case active
    case revoked
}

/// Revokes row `id` of `table` (devices or biometric keys) if it is active; revoking again changes nothing.
func revokeCredential(_ id: String, in table: String, at now: Date, on sql: any SQLDatabase) async throws {
    try await sql.raw("""
        UPDATE \(name: table) SET status = \(bind: CredentialStatus.revoked.rawValue), revoked_at = \(bind: now)
        WHERE id = \(bind: id) AND status = \(bind: CredentialStatus.active.rawValue)
        """).run()
}
