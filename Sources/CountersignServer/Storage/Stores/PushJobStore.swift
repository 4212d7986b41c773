import Foundation

/// Every statement on `push_jobs` and `push_deliveries`: the push queue and its delivery records.
struct PushJobStore {
    static let table = "push_jobs"
    static let deliveryTable = "push_deliveries"
    let db: any SQLExecutor

    /// Saves a new job, and for the inbox its delivery already made.
    func insert(_ job: PushJobRecord, delivery: PushDeliveryRecord?) -> [DeferredStatement] {
        let jobInsertion = DeferredStatement(BoundStatement("""
            INSERT INTO push_jobs (id, approval_id, device_id, channel, status, attempts, next_attempt_at, lease, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            """,
            job.id, job.approvalID, job.deviceID, job.channel, job.status, job.attempts, job.nextAttemptAt, job.lease, job.createdAt))
        guard let delivery else { return [jobInsertion] }
        return [jobInsertion, insertion(of: delivery)]
    }

    func insert(_ delivery: PushDeliveryRecord) async throws {
        _ = try await db.run(insertion(of: delivery))
    }

    private func insertion(of delivery: PushDeliveryRecord) -> DeferredStatement {
        DeferredStatement(BoundStatement("""
            INSERT INTO push_deliveries (id, job_id, approval_id, device_id, channel, status, reason, attempt, attempted_at, next_attempt_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            """,
            delivery.id, delivery.jobID, delivery.approvalID, delivery.deviceID, delivery.channel, delivery.status, delivery.reason,
            delivery.attempt, delivery.attemptedAt, delivery.nextAttemptAt))
    }

    /// Claims up to `limit` due jobs by moving them under one fresh lease until `leaseEnd`. On PostgreSQL
    /// the rows are locked as they are picked and rows another instance is claiming are skipped, so two
    /// senders never take the same job; on SQLite the single writer does the same. A job is due again only
    /// when its lease runs out without its sender finishing it (the sender died mid-send).
    func claimDue(at now: Date, limit: Int, leaseEnd: Date) async throws -> [PushJobRecord] {
        let sql = db.database == .postgresql ? Self.claimLockingRows : Self.claim
        return try await db.all(PushJobRecord.self, sql, UUID().uuidString, leaseEnd, PushStatus.queued.rawValue, now, limit)
    }

    private static func claim(_ lockingClause: String) -> String {
        """
        UPDATE push_jobs SET lease = $1, next_attempt_at = $2
        WHERE status = $3 AND next_attempt_at <= $4 AND id IN (
            SELECT id FROM push_jobs WHERE status = $3 AND next_attempt_at <= $4
            ORDER BY next_attempt_at LIMIT $5 \(lockingClause))
        RETURNING *
        """
    }

    private static let claim = claim("")
    private static let claimLockingRows = claim("FOR UPDATE SKIP LOCKED")

    // The statements below change a job only under the lease it was claimed with: a sender that
    // outlived its lease (and so may have been overtaken by another) changes nothing.

    /// Ends the job's attempt: its new status and attempt count, due again at `nextAttemptAt`, lease released.
    /// The job's attempt ended: its new status, while this sender still holds its lease. The statement
    /// answers the row it changed: none when another instance took the job over since.
    static func finishingAttempt(_ job: PushJobRecord, status: PushStatus, attempts: Int, nextAttemptAt: Date) -> DeferredStatement {
        DeferredStatement(returningChangedRows: BoundStatement("""
            UPDATE push_jobs SET status = $1, attempts = $2, lease = NULL, next_attempt_at = $3
            WHERE id = $4 AND lease = $5
            RETURNING id
            """, status.rawValue, attempts, nextAttemptAt, job.id, job.lease))
    }

    /// Releases the job's lease, due again at `now` (a send cut short by stopping).
    func release(_ job: PushJobRecord, dueAt now: Date) async throws {
        try await db.run("UPDATE push_jobs SET lease = NULL, next_attempt_at = $1 WHERE id = $2 AND lease = $3", now, job.id, job.lease)
    }

    /// Ends a job without an attempt (its approval closed while it waited).
    func abandon(_ job: PushJobRecord) async throws {
        try await db.run("UPDATE push_jobs SET status = $1, lease = NULL WHERE id = $2 AND lease = $3", PushStatus.failed.rawValue, job.id, job.lease)
    }

    /// Delivery records, newest first, optionally of one approval or device.
    func deliveries(approvalID: String?, deviceID: String?, after: String?, limit: Int) async throws -> [PushDeliveryRecord] {
        // Newest first; a page continues after the row `after` names (none when it names no delivery).
        guard let after else { return try await db.all(PushDeliveryRecord.self, Self.deliveries, approvalID, deviceID, limit) }
        return try await db.all(PushDeliveryRecord.self, Self.deliveriesAfter, approvalID, deviceID, after, limit)
    }

    private static func deliveries(continuing: Bool) -> String {
        """
        SELECT * FROM push_deliveries
        WHERE (CAST($1 AS TEXT) IS NULL OR approval_id = $1) AND (CAST($2 AS TEXT) IS NULL OR device_id = $2)
        \(continuing ? "AND (attempted_at, attempt, id) < (SELECT attempted_at, attempt, id FROM push_deliveries WHERE id = $3)" : "")
        ORDER BY attempted_at DESC, attempt DESC, id DESC LIMIT \(continuing ? "$4" : "$3")
        """
    }

    private static let deliveries = deliveries(continuing: false)
    private static let deliveriesAfter = deliveries(continuing: true)
}
