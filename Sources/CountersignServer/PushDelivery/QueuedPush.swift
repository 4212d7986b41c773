import CountersignCore
import Fluent
import FluentSQL
import Foundation

/// A push saved with the approval it belongs to: its job, and for the inbox its delivery already made.
struct QueuedPush: Sendable {
    let job: PushJobModel
    let delivery: PushDeliveryModel?
    let createdAt: Date

    /// The approval's push to `device`: for a provider, queued and due at once; for the inbox, sent, with
    /// its delivery already made.
    init(approvalID: String, device: DeviceModel, at now: Date) {
        let isInbox = device.pushTarget.channel == .inbox
        let job = PushJobModel()
        job.id = SecureRandom.identifier(prefix: "psh")
        job.approvalID = approvalID
        job.deviceID = device.id!
        job.channel = device.pushChannel
        job.status = (isInbox ? PushStatus.sent : PushStatus.queued).rawValue
        job.attempts = isInbox ? 1 : 0
        job.nextAttemptAt = now
        self.job = job
        delivery = isInbox ? PushDeliveryModel(of: job, attempt: 1, at: now, status: .delivered) : nil
        createdAt = now
    }

    /// Inserts with plain SQL: every approval saves one.
    func save(on database: any Database) async throws {
        let now = createdAt
        let sql = try database.sql
        try await sql.raw("""
            INSERT INTO \(ident: PushJobModel.schema) (id, approval_id, device_id, channel, status, attempts, next_attempt_at, created_at)
            VALUES (\(bind: job.id), \(bind: job.approvalID), \(bind: job.deviceID), \(bind: job.channel), \(bind: job.status),
                \(bind: job.attempts), \(bind: job.nextAttemptAt), \(bind: now))
            """).run()
        guard let delivery else { return }
        try await sql.raw("""
            INSERT INTO \(ident: PushDeliveryModel.schema) (id, job_id, approval_id, device_id, channel, status, attempt, attempted_at)
            VALUES (\(bind: delivery.id), \(bind: delivery.jobID), \(bind: delivery.approvalID), \(bind: delivery.deviceID),
                \(bind: delivery.channel), \(bind: delivery.status), \(bind: delivery.attempt), \(bind: delivery.attemptedAt))
            """).run()
    }
}
