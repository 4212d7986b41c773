import Foundation
import Logging

/// Removes what has outlived its use, in the background: accepted device signatures once they could
/// no longer be fresh, the answers ended runs keep for a client that lost them once their time is over,
/// and interactions, approvals and their push jobs and delivery records once they have been expired for
/// longer than the retention, decoys with them (the push-fatigue limits read both alike), and security
/// events older than theirs (a stranger can add them). Transaction evidence is kept.
///
/// Rows go in small batches, each its own short transaction, with a pause between batches, so requests
/// writing meanwhile wait at most one batch (on SQLite a delete holds the only write lock while it runs).
/// With several instances on one database, one sweeps at a time: a batch that finds another instance
/// sweeping ends this sweep.
final class ExpirySweeper: ServerLifecycle {
    private let storage: Storage
    private let clock: any WallClock
    private let retention: TimeInterval
    private let securityEventRetention: TimeInterval
    private let interval: Duration
    private let logger: Logger
    private let loop = ServerLifetimeTask()

    /// Rows removed per statement. A request that writes meanwhile waits for the batch under way: while
    /// 100,000 expired approvals went on a slow host, one sign-in in ten waited about 70 ms with batches
    /// of 100, half that with 25 (docs/BENCHMARKS.md, the pending soak).
    static let batchSize = 25
    /// The pause between batches, in which waiting requests take the write lock.
    static let pauseBetweenBatches = Duration.milliseconds(5)

    /// What one sweep removed.
    struct Removed: Equatable {
        var deviceSignatures = 0
        var idempotentReplays = 0
        var interactions = 0
        var approvals = 0
        var pushJobs = 0
        var pushDeliveries = 0
        var enrollmentCodes = 0
        var decoyApprovals = 0
        var securityEvents = 0
        var browserCredentials = 0
        var cibaRequests = 0

        var total: Int {
            deviceSignatures + idempotentReplays + interactions + approvals + pushJobs + pushDeliveries + enrollmentCodes + decoyApprovals
                + securityEvents + browserCredentials + cibaRequests
        }
    }

    init(
        storage: Storage, clock: any WallClock, retention: TimeInterval, securityEventRetention: TimeInterval, interval: TimeInterval,
        logger: Logger
    ) {
        self.storage = storage
        self.clock = clock
        self.retention = retention
        self.securityEventRetention = securityEventRetention
        self.interval = .milliseconds(Int64(interval * 1000))
        self.logger = logger
    }

    func didBoot() throws {
        loop.start { await self.run() }
    }

    func shutdown() async {
        await loop.stop()
    }

    private func run() async {
        while !Task.isCancelled {
            // An interval before the first sweep too: on PostgreSQL a sweep at start would hold the sweep
            // lock while a caller's own `sweep()` (a test's) finds it taken and removes nothing.
            try? await Task.sleep(for: interval)
            guard !Task.isCancelled else { return }
            do {
                let started = ContinuousClock.now
                let removed = try await sweep()
                if removed.total > 0 {
                    logger.info("expired records removed", metadata: [
                        "device_signatures": "\(removed.deviceSignatures)", "idempotent_replays": "\(removed.idempotentReplays)", "interactions": "\(removed.interactions)",
                        "approvals": "\(removed.approvals)", "push_jobs": "\(removed.pushJobs)",
                        "push_deliveries": "\(removed.pushDeliveries)", "enrollment_codes": "\(removed.enrollmentCodes)",
                        "decoy_approvals": "\(removed.decoyApprovals)", "security_events": "\(removed.securityEvents)",
                        "browser_credentials": "\(removed.browserCredentials)",
                        "duration": "\(started.duration(to: .now))",
                    ])
                }
            } catch is CancellationError {
                return
            } catch {
                logger.error("expired records could not be removed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Removes everything due now, batch by batch: what the loop does every interval, and what a test
    /// awaits instead of waiting for the loop.
    func sweep() async throws -> Removed {
        let now = clock.now()
        let cutoff = now.addingTimeInterval(-retention)
        var removed = Removed()
        removed.deviceSignatures = try await inBatches { try await $0.deleteExpired(.usedDeviceSignatures, before: now, limit: $1) }
        removed.idempotentReplays = try await inBatches { try await $0.deleteExpired(.idempotentReplays, before: now, limit: $1) }
        while let batch = try await inTransaction({ try await $0.deleteExpiredApprovals(before: cutoff, limit: Self.batchSize) }),
            batch.approvals > 0
        {
            removed.approvals += batch.approvals
            removed.pushJobs += batch.pushJobs
            removed.pushDeliveries += batch.pushDeliveries
            try await Task.sleep(for: Self.pauseBetweenBatches)
        }
        // Interactions that never reached a user go at expiry; the others after the retention; none while
        // its last answer is kept (removed above once its time is over).
        removed.interactions = try await inBatches { try await $0.deleteExpired(.anonymousInteractions, before: now, limit: $1) }
            + inBatches { try await $0.deleteExpired(.interactions, before: cutoff, limit: $1) }
        removed.enrollmentCodes = try await inBatches { try await $0.deleteExpired(.enrollmentCodes, before: cutoff, limit: $1) }
        removed.decoyApprovals = try await inBatches { try await $0.deleteExpired(.decoyApprovals, before: cutoff, limit: $1) }
        let eventsCutoff = now.addingTimeInterval(-securityEventRetention)
        removed.securityEvents = try await inBatches {
            try await $0.deleteExpired(.securityEvents, before: eventsCutoff, limit: $1)
        }
        removed.browserCredentials = try await inBatches {
            try await $0.deleteExpired(.browserCredentials, before: now, limit: $1)
        }
        removed.cibaRequests = try await inBatches { try await $0.deleteExpired(.cibaRequests, before: cutoff, limit: $1) }
        return removed
    }

    /// Runs one batch in its own transaction; nil when another instance is sweeping.
    private func inTransaction<T: Sendable>(_ batch: @escaping @Sendable (RetentionStore) async throws -> T) async throws -> T? {
        try await storage.transaction { storage in
            guard try await storage.retention.takeSweepLock() else { return nil }
            return try await batch(storage.retention)
        }
    }

    /// Runs `deleteBatch` (given the batch size, returning how many rows it deleted) until a batch comes
    /// back short or another instance is sweeping, pausing between batches.
    private func inBatches(_ deleteBatch: @escaping @Sendable (RetentionStore, Int) async throws -> Int) async throws -> Int {
        var count = 0
        while let deleted = try await inTransaction({ try await deleteBatch($0, Self.batchSize) }) {
            count += deleted
            guard deleted == Self.batchSize else { break }
            try await Task.sleep(for: Self.pauseBetweenBatches)
        }
        return count
    }
}
