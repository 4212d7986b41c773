import Foundation

/// Something an operator must be able to see afterwards: a "this wasn't me" report, a rate limit hit.
/// Never a secret; the admin API lists the records as they are.
struct SecurityEventRecord: Codable, Sendable {
    let id: String
    /// What happened, one of `SecurityEventKind`.
    let kind: String
    let userID: String?
    let approvalID: String?
    let deviceID: String?
    /// A line for a person.
    let detail: String
    let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, kind, detail
        case userID = "user_id"
        case approvalID = "approval_id"
        case deviceID = "device_id"
        case createdAt = "created_at"
    }
}

/// The kinds of security event.
enum SecurityEventKind: String, Sendable {
    /// The person denied a request on the phone as not their own.
    case notMine = "not_me"
    /// A new request for a user was refused by the push-fatigue limits.
    case rateLimited = "rate_limited"
}
