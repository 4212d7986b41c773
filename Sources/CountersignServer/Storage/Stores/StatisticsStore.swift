import SQLKit
import Foundation
import Journeys

/// Counts of what the server holds, to watch load and the expiry sweep.
struct StatisticsStore {
    let sql: any SQLDatabase

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
        func count(_ table: String, where condition: SQLQueryString = "1 = 1") async throws -> Int {
            try await sql.raw("SELECT COUNT(*) AS n FROM \(name: table) WHERE \(condition)").first(decodingColumn: "n", as: Int.self) ?? 0
        }
        // Pending and not yet past its expiry, for approvals and decoys alike.
        let waiting: SQLQueryString = "status = \(bind: ApprovalStatus.pending.rawValue) AND expires_at > \(bind: now)"
        return Counts(
            approvalsPending: try await count(ApprovalStore.table, where: waiting),
            approvalsStored: try await count(ApprovalStore.table),
            decoyApprovalsPending: try await count(ApprovalStore.decoyTable, where: waiting),
            decoyApprovalsStored: try await count(ApprovalStore.decoyTable),
            interactionsStored: try await count(InteractionStore.table),
            pushJobsQueued: try await count(PushJobStore.table, where: "status = \(bind: PushStatus.queued.rawValue)"),
            pushJobsStored: try await count(PushJobStore.table),
            pushDeliveriesStored: try await count(PushJobStore.deliveryTable),
            usedDeviceSignaturesStored: try await count(UsedDeviceSignatureStore.table))
    }
}
