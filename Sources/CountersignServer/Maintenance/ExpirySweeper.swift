import Fluent
import FluentSQL
import Foundation
import Logging
import Vapor

/// Removes what has outlived its use, in the background: accepted device signatures once they could
/// no longer be fresh, and interactions, approvals and their push jobs and delivery records once they
/// have been expired for longer than the retention. Transaction evidence is kept.
///
/// Rows go in small batches, each its own short transaction, with a pause between batches, so requests
/// writing meanwhile wait at most one batch (on SQLite a delete holds the only write lock while it runs).
final class ExpirySweeper: LifecycleHandler, Sendable {
    private let database: any Database
    private let clock: any WallClock
    private let retention: TimeInterval
    private let interval: Duration
    private let logger: Logger
    private let loop = ServerLifetimeTask()

    /// Rows removed per statement.
    static let batchSize = 100
    /// The pause between batches, in which waiting requests take the write lock.
    static let pauseBetweenBatches = Duration.milliseconds(5)

    /// What one sweep removed.
    struct Removed: Equatable {
        var deviceSignatures = 0
        var interactions = 0
        var approvals = 0
        var pushJobs = 0
        var pushDeliveries = 0

        var total: Int { deviceSignatures + interactions + approvals + pushJobs + pushDeliveries }
    }

    init(database: any Database, clock: any WallClock, retention: TimeInterval, interval: TimeInterval, logger: Logger) {
        self.database = database
        self.clock = clock
        self.retention = retention
        self.interval = .milliseconds(Int64(interval * 1000))
        self.logger = logger
    }

    func didBoot(_ application: Application) throws {
        loop.start { await self.run() }
    }

    func shutdownAsync(_ application: Application) async {
        await loop.stop()
    }

    private func run() async {
        while !Task.isCancelled {
            do {
                let started = ContinuousClock.now
                let removed = try await sweep()
                if removed.total > 0 {
                    logger.info("expired records removed", metadata: [
                        "device_signatures": "\(removed.deviceSignatures)", "interactions": "\(removed.interactions)",
                        "approvals": "\(removed.approvals)", "push_jobs": "\(removed.pushJobs)",
                        "push_deliveries": "\(removed.pushDeliveries)", "duration": "\(started.duration(to: .now))",
                    ])
                }
            } catch is CancellationError {
                return
            } catch {
                logger.error("expired records could not be removed", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Removes everything due now, batch by batch.
    private func sweep() async throws -> Removed {
        let sql = try database.sql
        let now = clock.now()
        let cutoff = now.addingTimeInterval(-retention)
        var removed = Removed()
        removed.deviceSignatures = try await deleteExpired(from: UsedDeviceSignatures.schema, before: now, on: sql)
        while let batch = try await removeApprovalBatch(expiredBefore: cutoff) {
            removed.approvals += batch.approvals
            removed.pushJobs += batch.pushJobs
            removed.pushDeliveries += batch.pushDeliveries
            try await Task.sleep(for: Self.pauseBetweenBatches)
        }
        removed.interactions = try await deleteExpired(from: InteractionRecord.schema, before: cutoff, on: sql)
        return removed
    }

    /// Deletes the rows of `table` whose `expires_at` is before `date`, a batch per statement.
    private func deleteExpired(from table: String, before date: Date, on sql: any SQLDatabase) async throws -> Int {
        var count = 0
        while true {
            let deleted = try await sql.raw("""
                DELETE FROM \(ident: table) WHERE id IN (
                    SELECT id FROM \(ident: table) WHERE expires_at < \(bind: date) LIMIT \(literal: Self.batchSize))
                RETURNING id
                """).all().count
            count += deleted
            guard deleted == Self.batchSize else { return count }
            try await Task.sleep(for: Self.pauseBetweenBatches)
        }
    }

    /// Deletes up to one batch of approvals expired before `cutoff`, with their push jobs and delivery
    /// records, in one transaction; nil when none is left. Every statement writes, so the transaction
    /// takes SQLite's write lock at its first statement instead of failing to upgrade a read.
    private func removeApprovalBatch(expiredBefore cutoff: Date) async throws -> Removed? {
        try await database.transaction { database in
            let sql = try database.sql
            // Oldest first, along the expiry index: ordering by the random ids instead walked the whole id
            // index on every statement (about 200 ms a batch at 100,000 approvals, against 18 ms).
            let batch: SQLQueryString = """
                SELECT id FROM \(ident: ApprovalRecord.schema) WHERE expires_at < \(bind: cutoff) ORDER BY expires_at LIMIT \(literal: Self.batchSize)
                """
            var removed = Removed()
            removed.pushDeliveries = try await sql.raw("""
                DELETE FROM \(ident: PushDeliveryModel.schema) WHERE approval_id IN (\(batch)) RETURNING id
                """).all().count
            removed.pushJobs = try await sql.raw("""
                DELETE FROM \(ident: PushJobModel.schema) WHERE approval_id IN (\(batch)) RETURNING id
                """).all().count
            removed.approvals = try await sql.raw("""
                DELETE FROM \(ident: ApprovalRecord.schema) WHERE id IN (\(batch)) RETURNING id
                """).all().count
            return removed.approvals == 0 ? nil : removed
        }
    }
}
