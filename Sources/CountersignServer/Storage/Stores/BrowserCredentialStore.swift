import Foundation

/// Every statement on `browser_credentials`.
struct BrowserCredentialStore {
    static let table = "browser_credentials"
    let db: any SQLExecutor

    func insert(_ credential: BrowserCredentialRecord) async throws {
        try await db.run("""
            INSERT INTO browser_credentials (id, user_id, application_id, secret_hash, status, created_at, expires_at, revoked_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """,
            credential.id, credential.userID, credential.applicationID, credential.secretHash, credential.status,
            credential.createdAt, credential.expiresAt, credential.revokedAt)
    }

    func find(_ id: String) async throws -> BrowserCredentialRecord? {
        try await db.first(BrowserCredentialRecord.self, "SELECT * FROM browser_credentials WHERE id = $1", id)
    }

    /// The credential whose secret hashes to `secretHash`, whatever its status.
    func find(secretHash: String) async throws -> BrowserCredentialRecord? {
        try await db.first(BrowserCredentialRecord.self, "SELECT * FROM browser_credentials WHERE secret_hash = $1", secretHash)
    }

    /// All the user's credentials, revoked and expired ones too, oldest first.
    func all(ofUser userID: String) async throws -> [BrowserCredentialRecord] {
        try await db.all(BrowserCredentialRecord.self, "SELECT * FROM browser_credentials WHERE user_id = $1 ORDER BY created_at", userID)
    }

    /// Revokes the credential if it is active; revoking again changes nothing.
    func revoke(_ id: String, at now: Date) async throws {
        try await CredentialStatus.revoke(id, with: Self.revocation, at: now, on: db)
    }

    private static let revocation = CredentialStatus.revocation(in: "browser_credentials")
}
