import CountersignCore
import Foundation

/// One delivery attempt, as the admin API lists it.
struct PushDeliveryRecord: Codable, Sendable {
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

    enum CodingKeys: String, CodingKey {
        case id, channel, status, reason, attempt
        case jobID = "job_id"
        case approvalID = "approval_id"
        case deviceID = "device_id"
        case attemptedAt = "attempted_at"
        case nextAttemptAt = "next_attempt_at"
    }

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
enum DeliveryStatus: String {
    case delivered
    case retryScheduled = "retry_scheduled"
    /// The retry would come after the approval expires.
    case gaveUp = "gave_up"
    case tokenInvalid = "token_invalid"
    case rejected
}
