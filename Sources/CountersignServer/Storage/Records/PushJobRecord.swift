import Foundation

/// A push waiting to be sent, being sent, or finished: the durable queue the push sender works from.
struct PushJobRecord: Codable, Sendable {
    let id: String
    let approvalID: String
    let deviceID: String
    let channel: String
    /// A `PushStatus`.
    let status: String
    /// Attempts made so far.
    let attempts: Int
    /// When the job is next due; while an instance is sending, a lease into the future.
    let nextAttemptAt: Date
    /// The claim of the instance sending it now.
    let lease: String?
    let createdAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, channel, status, attempts, lease
        case approvalID = "approval_id"
        case deviceID = "device_id"
        case nextAttemptAt = "next_attempt_at"
        case createdAt = "created_at"
    }
}

/// What the browser is told about its approval's push.
enum PushStatus: String {
    case queued
    case sent
    case failed
}
