import Foundation

/// The expiry sweeper's statements: deletes in batches, each batch short so that writers wait at most
/// one (on SQLite a delete holds the only write lock while it runs).
struct RetentionStore {
    let db: any SQLExecutor

    /// What one batch of expired approvals removed.
    struct RemovedApprovals: Sendable {
        var approvals = 0
        var pushJobs = 0
        var pushDeliveries = 0
    }

    /// Takes the sweep for the rest of this transaction; false when another instance holds it now. On
    /// PostgreSQL a transaction-level advisory lock, so instances never delete the same rows at once (and
    /// never deadlock doing so); SQLite has one writer at a time already.
    func takeSweepLock() async throws -> Bool {
        guard db.database == .postgresql else { return true }
        let row = try await db.first("SELECT pg_try_advisory_xact_lock($1) AS taken", Self.sweepLockKey)
        return try row?.decode("taken", as: Bool.self) == true
    }

    /// The advisory lock's number: any constant the instances share ("CSGN").
    private static let sweepLockKey = 0x4353_474E

    /// The rows the sweeper removes batch by batch (`deleteExpired(_:before:limit:)`), each by its own
    /// statement.
    enum Expired: Sendable {
        case usedDeviceSignatures
        case idempotentReplays
        /// Interactions that never reached a user, once their last answer is no longer kept.
        case anonymousInteractions
        /// Interactions, once their last answer is no longer kept.
        case interactions
        case enrollmentCodes
        case decoyApprovals
        /// Security events, by `created_at` (they have no expiry of their own).
        case securityEvents
        case browserCredentials
        /// Backend clients' requests, after the retention (their approvals go with the same cutoff).
        case cibaRequests

        fileprivate var statement: String {
            switch self {
            case .usedDeviceSignatures: Self.deleteUsedDeviceSignatures
            case .idempotentReplays: Self.deleteIdempotentReplays
            case .anonymousInteractions: Self.deleteAnonymousInteractions
            case .interactions: Self.deleteInteractions
            case .enrollmentCodes: Self.deleteEnrollmentCodes
            case .decoyApprovals: Self.deleteDecoyApprovals
            case .securityEvents: Self.deleteSecurityEvents
            case .browserCredentials: Self.deleteBrowserCredentials
            case .cibaRequests: Self.deleteCIBARequests
            }
        }

        /// Deletes up to `$2` rows of `table` whose `column` is before `$1` (and that meet `condition`).
        private static func deleteBatch(from table: String, by column: String = "expires_at", where condition: String = "1 = 1") -> String {
            """
            DELETE FROM \(table) WHERE id IN (
                SELECT id FROM \(table) WHERE \(column) < $1 AND \(condition) LIMIT $2)
            RETURNING id
            """
        }

        /// An interaction whose run's last answer is kept (`idempotent_replays`) stays until that goes.
        private static let answerGone = "NOT EXISTS (SELECT 1 FROM idempotent_replays k WHERE k.id = interactions.id)"

        private static let deleteUsedDeviceSignatures = deleteBatch(from: "used_device_signatures")
        private static let deleteIdempotentReplays = deleteBatch(from: "idempotent_replays")
        private static let deleteAnonymousInteractions = deleteBatch(from: "interactions", where: "user_id IS NULL AND \(answerGone)")
        private static let deleteInteractions = deleteBatch(from: "interactions", where: answerGone)
        private static let deleteEnrollmentCodes = deleteBatch(from: "enrollment_codes")
        private static let deleteDecoyApprovals = deleteBatch(from: "decoy_approvals")
        private static let deleteSecurityEvents = deleteBatch(from: "security_events", by: "created_at")
        private static let deleteBrowserCredentials = deleteBatch(from: "browser_credentials")
        private static let deleteCIBARequests = deleteBatch(from: "ciba_requests")
    }

    /// Deletes up to `limit` of the `rows` expired before `date`; returns how many.
    func deleteExpired(_ rows: Expired, before date: Date, limit: Int) async throws -> Int {
        try await db.all(rows.statement, date, limit).count
    }

    /// Deletes up to `limit` approvals expired before `cutoff` with their push jobs and delivery records.
    /// Run it in a transaction: every statement writes, so SQLite takes the write lock at the first one
    /// instead of failing to upgrade a read.
    func deleteExpiredApprovals(before cutoff: Date, limit: Int) async throws -> RemovedApprovals {
        var removed = RemovedApprovals()
        removed.pushDeliveries = try await db.all(Self.deletePushDeliveryBatch, cutoff, limit).count
        removed.pushJobs = try await db.all(Self.deletePushJobBatch, cutoff, limit).count
        removed.approvals = try await db.all(Self.deleteApprovalBatch, cutoff, limit).count
        return removed
    }

    /// The batch: up to `$2` approvals expired before `$1`. Oldest first, along the expiry index: ordering
    /// by the random ids instead walked the whole id index on every statement (about 200 ms a batch at
    /// 100,000 approvals, against 18 ms).
    private static let expiredApprovalBatch = "SELECT id FROM approvals WHERE expires_at < $1 ORDER BY expires_at LIMIT $2"
    private static let deletePushDeliveryBatch =
        "DELETE FROM push_deliveries WHERE approval_id IN (\(expiredApprovalBatch)) RETURNING id"
    private static let deletePushJobBatch = "DELETE FROM push_jobs WHERE approval_id IN (\(expiredApprovalBatch)) RETURNING id"
    private static let deleteApprovalBatch = "DELETE FROM approvals WHERE id IN (\(expiredApprovalBatch)) RETURNING id"
}
