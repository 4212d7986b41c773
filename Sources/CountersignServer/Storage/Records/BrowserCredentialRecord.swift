import Foundation

/// A browser that signed in as a user with an approval on their phone (OWASP's "device cookie"): the
/// push-fatigue limits count its requests apart from everyone else's, so strangers cannot hold it back.
/// The browser keeps the secret; only its SHA-256 is stored.
struct BrowserCredentialRecord: Sendable {
    static let idPrefix = "bcr"
    /// How long a browser stays known after it last signed in (each sign-in issues a new credential).
    static let lifetime: TimeInterval = 90 * 86400

    let id: String
    let userID: String
    /// The application whose web client the browser signed in through; it counts there only.
    let applicationID: String
    let secretHash: String
    /// A `CredentialStatus`.
    let status: String
    let createdAt: Date
    let expiresAt: Date
    let revokedAt: Date?

    /// Not revoked, and not expired at `now`.
    func isValid(at now: Date) -> Bool {
        status == CredentialStatus.active.rawValue && now < expiresAt
    }
}

extension BrowserCredentialRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        userID = try row["user_id"]
        applicationID = try row["application_id"]
        secretHash = try row["secret_hash"]
        status = try row["status"]
        createdAt = try row["created_at"]
        expiresAt = try row["expires_at"]
        revokedAt = try row["revoked_at"]
    }
}
