import Foundation

/// A push waiting to be sent, being sent, or finished: the durable queue the push sender works from.
struct PushJobRecord: Sendable {
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
}

/// What the browser is told about its approval's push.
extension PushJobRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        approvalID = try row["approval_id"]
        deviceID = try row["device_id"]
        channel = try row["channel"]
        status = try row["status"]
        attempts = try row["attempts"]
        nextAttemptAt = try row["next_attempt_at"]
        lease = try row["lease"]
        createdAt = try row["created_at"]
    }
}

enum PushStatus: String {
    case queued
    case sent
    case failed
}
