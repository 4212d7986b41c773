import Foundation
import Journeys

/// Counts of what the server holds, to watch load and the expiry sweep.
struct StatisticsStore {
    let db: any SQLExecutor

    struct Counts {
        /// Approvals waiting for a phone now (pending, not past expiry).
        let approvalsPending: Int
        /// Approvals stored, in any state, until the sweep removes them.
        let approvalsStored: Int
        /// Decoys a browser waits on now, for identifiers with no phone (a rise is someone trying emails).
        let decoyApprovalsPending: Int
        let decoyApprovalsStored: Int
        let interactionsStored: Int
        let pushJobsQueued: Int
        let pushJobsStored: Int
        let pushDeliveriesStored: Int
        let usedDeviceSignaturesStored: Int
    }

    func counts(at now: Date) async throws -> Counts {
        func count(_ statement: BoundStatement) async throws -> Int {
            guard let row = try await db.first(statement) else { return 0 }
            return try row.decode("n", as: Int.self)
        }
        // Pending and not yet past its expiry, for approvals and decoys alike.
        let pending = ApprovalStatus.pending.rawValue
        return Counts(
            approvalsPending: try await count(BoundStatement(
                "SELECT COUNT(*) AS n FROM approvals WHERE status = $1 AND expires_at > $2", pending, now)),
            approvalsStored: try await count(BoundStatement("SELECT COUNT(*) AS n FROM approvals")),
            decoyApprovalsPending: try await count(BoundStatement(
                "SELECT COUNT(*) AS n FROM decoy_approvals WHERE status = $1 AND expires_at > $2", pending, now)),
            decoyApprovalsStored: try await count(BoundStatement("SELECT COUNT(*) AS n FROM decoy_approvals")),
            interactionsStored: try await count(BoundStatement("SELECT COUNT(*) AS n FROM interactions")),
            pushJobsQueued: try await count(BoundStatement(
                "SELECT COUNT(*) AS n FROM push_jobs WHERE status = $1", PushStatus.queued.rawValue)),
            pushJobsStored: try await count(BoundStatement("SELECT COUNT(*) AS n FROM push_jobs")),
            pushDeliveriesStored: try await count(BoundStatement("SELECT COUNT(*) AS n FROM push_deliveries")),
            usedDeviceSignaturesStored: try await count(BoundStatement("SELECT COUNT(*) AS n FROM used_device_signatures")))
    }
}
