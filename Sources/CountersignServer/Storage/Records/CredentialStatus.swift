import Foundation

/// Whether a device or biometric key may still be used.
enum CredentialStatus: String, Codable {
    case active
    case revoked
}

extension CredentialStatus: SQLBindable, SQLColumnDecodable {}

extension CredentialStatus {
    /// The statement that revokes the active rows of `table` (devices, biometric keys or browser
    /// credentials) whose `column` is `$3`: `$1` the revoked status, `$2` the time, `$4` the active status.
    /// Revoking again changes nothing.
    static func revocation(in table: String, by column: String = "id") -> String {
        "UPDATE \(table) SET status = $1, revoked_at = $2 WHERE \(column) = $3 AND status = $4"
    }

    /// Revokes what `revocation` names, `key` being its `$3`.
    static func revoke(_ key: String, with statement: String, at now: Date, on db: any SQLExecutor) async throws {
        try await db.run(statement, revoked, now, key, active)
    }
}
