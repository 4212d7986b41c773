import SQLKit
import Foundation

/// The expiry sweeper's statements: deletes in batches, each batch short so that writers wait at most
/// one (on SQLite a delete holds the only write lock while it runs).
struct RetentionStore {
    let sql: any SQLDatabase

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
        guard sql.dialect.name == "postgresql" else { return true }
        struct Row: Decodable { let taken: Bool }
        let row = try await sql.raw("SELECT pg_try_advisory_xact_lock(\(literal: Self.sweepLockKey)) AS taken").first(decoding: Row.self)
        return row?.taken == true
    }

    /// The advisory lock's number: any constant the instances share ("CSGN").
    private static let sweepLockKey = 0x4353_474E

    /// Deletes up to `limit` rows of `table` whose `column` (`expires_at`) is before `date` (and that meet
    /// `condition`); returns how many.
    func deleteExpired(
        from table: String, before date: Date, column: String = "expires_at", where condition: SQLQueryString = "1 = 1", limit: Int
    ) async throws -> Int {
        try await sql.raw("""
            DELETE FROM \(name: table) WHERE id IN (
                SELECT id FROM \(name: table) WHERE \(name: column) < \(bind: date) AND \(condition) LIMIT \(literal: limit))
            RETURNING id
            """).all().count
    }

    /// Deletes up to `limit` approvals expired before `cutoff` with their push jobs and delivery records.
    /// Run it in a transaction: every statement writes, so SQLite takes the write lock at the first one
    /// instead of failing to upgrade a read.
    func deleteExpiredApprovals(before cutoff: Date, limit: Int) async throws -> RemovedApprovals {
        // Oldest first, along the expiry index: ordering by the random ids instead walked the whole id
        // index on every statement (about 200 ms a batch at 100,000 approvals, against 18 ms).
        let batch: SQLQueryString = """
            SELECT id FROM \(name: ApprovalStore.table) WHERE expires_at < \(bind: cutoff) ORDER BY expires_at LIMIT \(literal: limit)
            """
        var removed = RemovedApprovals()
        removed.pushDeliveries = try await sql.raw("""
            DELETE FROM \(name: PushJobStore.deliveryTable) WHERE approval_id IN (\(batch)) RETURNING id
            """).all().count
        removed.pushJobs = try await sql.raw("""
            DELETE FROM \(name: PushJobStore.table) WHERE approval_id IN (\(batch)) RETURNING id
            """).all().count
        removed.approvals = try await sql.raw("""
            DELETE FROM \(name: ApprovalStore.table) WHERE id IN (\(batch)) RETURNING id
            """).all().count
        return removed
    }
}
