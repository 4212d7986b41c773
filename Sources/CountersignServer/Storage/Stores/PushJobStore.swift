import SQLKit
import Foundation

/// Every statement on `push_jobs` and `push_deliveries`: the push queue and its delivery records.
struct PushJobStore {
    static let table = "push_jobs"
    static let deliveryTable = "push_deliveries"
    let sql: any SQLDatabase

    /// Saves a new job, and for the inbox its delivery already made.
    func insert(_ job: PushJobRecord, delivery: PushDeliveryRecord?) throws -> [DeferredStatement] {
        let jobInsertion = DeferredStatement(try sql.insert(job, into: Self.table).query)
        guard let delivery else { return [jobInsertion] }
        return [jobInsertion, try insertion(of: delivery)]
    }

    func insert(_ delivery: PushDeliveryRecord) async throws {
        _ = try await sql.run(insertion(of: delivery))
    }

    private func insertion(of delivery: PushDeliveryRecord) throws -> DeferredStatement {
        DeferredStatement(try sql.insert(delivery, into: Self.deliveryTable).query)
    }

    /// Claims up to `limit` due jobs by moving them under one fresh lease until `leaseEnd`. On PostgreSQL
    /// the rows are locked as they are picked and rows another instance is claiming are skipped, so two
    /// senders never take the same job; on SQLite the single writer does the same. A job is due again only
    /// when its lease runs out without its sender finishing it (the sender died mid-send).
    func claimDue(at now: Date, limit: Int, leaseEnd: Date) async throws -> [PushJobRecord] {
        let lease = UUID().uuidString
        let queued = PushStatus.queued.rawValue
        let skipLocked: SQLQueryString = sql.dialect.name == "postgresql" ? "FOR UPDATE SKIP LOCKED" : ""
        return try await sql.raw("""
            UPDATE \(name: Self.table) SET lease = \(bind: lease), next_attempt_at = \(bind: leaseEnd)
            WHERE status = \(bind: queued) AND next_attempt_at <= \(bind: now) AND id IN (
                SELECT id FROM \(name: Self.table) WHERE status = \(bind: queued) AND next_attempt_at <= \(bind: now)
                ORDER BY next_attempt_at LIMIT \(bind: limit) \(skipLocked))
            RETURNING *
            """).all(decoding: PushJobRecord.self)
    }

    // The statements below change a job only under the lease it was claimed with: a sender that
    // outlived its lease (and so may have been overtaken by another) changes nothing.

    /// Ends the job's attempt: its new status and attempt count, due again at `nextAttemptAt`, lease released.
    /// The job's attempt ended: its new status, while this sender still holds its lease. The statement
    /// answers the row it changed: none when another instance took the job over since.
    static func finishingAttempt(_ job: PushJobRecord, status: PushStatus, attempts: Int, nextAttemptAt: Date) -> DeferredStatement {
        DeferredStatement(returningChangedRows: """
            UPDATE \(name: table)
            SET status = \(bind: status.rawValue), attempts = \(bind: attempts), lease = NULL, next_attempt_at = \(bind: nextAttemptAt)
            WHERE id = \(bind: job.id) AND lease = \(bind: job.lease)
            RETURNING id
            """)
    }

    /// Releases the job's lease, due again at `now` (a send cut short by stopping).
    func release(_ job: PushJobRecord, dueAt now: Date) async throws {
        try await sql.raw("""
            UPDATE \(name: Self.table) SET lease = NULL, next_attempt_at = \(bind: now) WHERE id = \(bind: job.id) AND lease = \(bind: job.lease)
            """).run()
    }

    /// Ends a job without an attempt (its approval closed while it waited).
    func abandon(_ job: PushJobRecord) async throws {
        try await sql.raw("""
            UPDATE \(name: Self.table) SET status = \(bind: PushStatus.failed.rawValue), lease = NULL
            WHERE id = \(bind: job.id) AND lease = \(bind: job.lease)
            """).run()
    }

    /// Delivery records, newest first, optionally of one approval or device.
    func deliveries(approvalID: String?, deviceID: String?, after: String?, limit: Int) async throws -> [PushDeliveryRecord] {
        var query = sql.select().column("*").from(Self.deliveryTable)
        if let approvalID { query = query.where("approval_id", .equal, approvalID) }
        if let deviceID { query = query.where("device_id", .equal, deviceID) }
        return try await query.newestFirst(by: ["attempted_at", "attempt"], of: Self.deliveryTable, after: after).limit(limit)
            .all(decoding: PushDeliveryRecord.self)
    }
}
