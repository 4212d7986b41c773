import CountersignCore
import Foundation

/// One delivery attempt, as the admin API lists it.
struct PushDeliveryRecord: Sendable {
    let id: String
    let jobID: String
    let approvalID: String
    let deviceID: String
    let channel: String
    /// A `DeliveryStatus`.
    let status: String
    let reason: String?
    let attempt: Int
    let attemptedAt: Date
    /// When the next attempt is due, for `retry_scheduled`.
    let nextAttemptAt: Date?

    /// Attempt number `attempt` of `job`, made at `now`.
    init(of job: PushJobRecord, attempt: Int, at now: Date, status: DeliveryStatus, reason: String? = nil, nextAttemptAt: Date? = nil) {
        id = SecureRandom.identifier(prefix: "pdl")
        jobID = job.id
        approvalID = job.approvalID
        deviceID = job.deviceID
        channel = job.channel
        self.attempt = attempt
        attemptedAt = now
        self.status = status.rawValue
        self.reason = reason
        self.nextAttemptAt = nextAttemptAt
    }
}

/// How one delivery attempt ended, as the admin API lists it.
extension PushDeliveryRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        jobID = try row["job_id"]
        approvalID = try row["approval_id"]
        deviceID = try row["device_id"]
        channel = try row["channel"]
        status = try row["status"]
        reason = try row["reason"]
        attempt = try row["attempt"]
        attemptedAt = try row["attempted_at"]
        nextAttemptAt = try row["next_attempt_at"]
    }
}

enum DeliveryStatus: String {
    case delivered
    case retryScheduled = "retry_scheduled"
    /// The retry would come after the approval expires.
    case gaveUp = "gave_up"
    case tokenInvalid = "token_invalid"
    case rejected
}
