import Foundation

/// A backend client's request for an approval (OpenID CIBA): the approval it made, and where its client
/// stands in redeeming it. The `auth_req_id` itself is never stored, only its hash.
struct CIBARequestRecord: Sendable {
    /// The prefix of its id, which its approval's `web_interaction_id` carries.
    static let idPrefix = "cib"

    /// The approval's `web_interaction_id`: what its close wakes.
    let id: String
    /// SHA-256 of the `auth_req_id`, hex.
    let authReqHash: String
    let clientID: String
    let userID: String
    let approvalID: String
    /// The scopes granted, space separated, `openid` among them.
    let scope: String
    /// Ping mode: the bearer token the notification carries, sealed (`SecretBox`, bound to `id`).
    let notificationToken: String?
    /// Ping mode: the `auth_req_id` the notification names, sealed as the token is.
    let notificationAuthReqID: String?
    /// Ping mode: the earliest the next notification attempt may start (a retry's backoff, or another
    /// instance's claim); nil: as soon as the answer is known.
    let notifyDueAt: Date?
    let notifyFirstAttemptAt: Date?
    /// Ping mode: when the notification was delivered, or given up.
    let notifiedAt: Date?
    /// Seconds the client waits between polls; raised by each `slow_down`.
    let pollInterval: Int
    /// The earliest the next poll is answered without `slow_down`.
    let nextPollAt: Date?
    let expiresAt: Date
    let createdAt: Date
    /// When its tokens were issued; a request is redeemed once.
    let redeemedAt: Date?
}

extension CIBARequestRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        authReqHash = try row["auth_req_hash"]
        clientID = try row["client_id"]
        userID = try row["user_id"]
        approvalID = try row["approval_id"]
        scope = try row["scope"]
        notificationToken = try row["notification_token"]
        notificationAuthReqID = try row["notification_auth_req_id"]
        notifyDueAt = try row["notify_due_at"]
        notifyFirstAttemptAt = try row["notify_first_attempt_at"]
        notifiedAt = try row["notified_at"]
        pollInterval = try row["poll_interval"]
        nextPollAt = try row["next_poll_at"]
        expiresAt = try row["expires_at"]
        createdAt = try row["created_at"]
        redeemedAt = try row["redeemed_at"]
    }
}
