import Foundation

/// Something an operator must be able to see afterwards: a "this wasn't me" report, a rate limit hit.
/// Never a secret; the admin API lists the records as they are (hence `Codable`: its JSON is theirs).
struct SecurityEventRecord: Codable, Sendable {
    let id: String
    /// What happened, one of `SecurityEventKind`.
    let kind: String
    let userID: String?
    let approvalID: String?
    let deviceID: String?
    /// A line for a person.
    let detail: String
    /// Who made the change through the admin API: `admin_key`, or the email of the console's operator.
    let actor: String?
    let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, kind, detail, actor
        case userID = "user_id"
        case approvalID = "approval_id"
        case deviceID = "device_id"
        case createdAt = "created_at"
    }
}

extension SecurityEventRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        kind = try row["kind"]
        userID = try row["user_id"]
        approvalID = try row["approval_id"]
        deviceID = try row["device_id"]
        detail = try row["detail"]
        actor = try row["actor"]
        createdAt = try row["created_at"]
    }
}

/// The kinds of security event.
enum SecurityEventKind: String, Sendable {
    /// The person denied a request on the phone as not their own.
    case notMine = "not_me"
    /// A new request for a user was refused by the push-fatigue limits.
    case rateLimited = "rate_limited"
    /// An admin API request came without the admin key, or with a wrong one.
    case adminAuthenticationFailed = "admin_auth_failed"
    /// A device signature was sent a second time.
    case signatureReplayed = "signature_replayed"
    /// The web OTP of an approval was typed wrong on the phone until no try was left.
    case otpExhausted = "otp_exhausted"
    /// The token signing key was rotated.
    case signingKeyRotated = "signing_key_rotated"
    /// A push provider configuration was created, changed or deleted.
    case pushConfigChanged = "push_config_changed"
    /// An application or a client was created.
    case applicationChanged = "application_changed"
    /// The admin revoked a device or a biometric key.
    case credentialRevoked = "credential_revoked"
    /// The admin linked a user to an application, or unlinked them.
    case userApplicationsChanged = "user_applications_changed"
    /// The admin had the server write a copy of its database.
    case databaseBackedUp = "database_backed_up"
    /// The admin issued an enrollment code: a new phone may join that user's account with it.
    case enrollmentCodeIssued = "enrollment_code_issued"
    /// An operator was invited to the console, or removed.
    case operatorChanged = "operator_changed"
    /// An operator signed in to the console.
    case consoleSignedIn = "console_signed_in"
    /// An operator signed out of the console.
    case consoleSignedOut = "console_signed_out"
    /// A console session was refused a request: an auditor's change, or a write without its CSRF token.
    case consoleRefused = "console_refused"
}
