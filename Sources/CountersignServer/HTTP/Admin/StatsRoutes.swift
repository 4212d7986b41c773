import CountersignCore
import Hummingbird

/// `GET /admin/v1/stats`: how many records the server holds, to watch load and the expiry sweep.
struct StatsRoutes: RouteGroup {
    let verifier: AdminKeyVerifier
    let storage: Storage
    let openWaits: OpenWaits
    let clock: any WallClock

    func register(on router: Router<ServerRequestContext>) {
        router.adminAPI(verifier).get("stats", use: stats)
    }

    /// `StatisticsStore.Counts` on the wire.
    struct Stats: Codable {
        let approvalsPending: Int
        let approvalsStored: Int
        let decoyApprovalsPending: Int
        let decoyApprovalsStored: Int
        let interactionsStored: Int
        let pushJobsQueued: Int
        let pushJobsStored: Int
        let pushDeliveriesStored: Int
        let usedDeviceSignaturesStored: Int
        /// Requests this instance holds open now.
        let eventStreamsOpen: Int
        let inboxWaitsOpen: Int

        enum CodingKeys: String, CodingKey {
            case approvalsPending = "approvals_pending"
            case approvalsStored = "approvals_stored"
            case decoyApprovalsPending = "decoy_approvals_pending"
            case decoyApprovalsStored = "decoy_approvals_stored"
            case interactionsStored = "interactions_stored"
            case pushJobsQueued = "push_jobs_queued"
            case pushJobsStored = "push_jobs_stored"
            case pushDeliveriesStored = "push_deliveries_stored"
            case usedDeviceSignaturesStored = "used_device_signatures_stored"
            case eventStreamsOpen = "event_streams_open"
            case inboxWaitsOpen = "inbox_waits_open"
        }
    }

    func stats(request: Request, context: ServerRequestContext) async throws -> Response {
        let counts = try await storage.statistics.counts(at: clock.now())
        return try .wire(Stats(
            approvalsPending: counts.approvalsPending, approvalsStored: counts.approvalsStored,
            decoyApprovalsPending: counts.decoyApprovalsPending, decoyApprovalsStored: counts.decoyApprovalsStored,
            interactionsStored: counts.interactionsStored, pushJobsQueued: counts.pushJobsQueued, pushJobsStored: counts.pushJobsStored,
            pushDeliveriesStored: counts.pushDeliveriesStored, usedDeviceSignaturesStored: counts.usedDeviceSignaturesStored,
            eventStreamsOpen: await openWaits.eventStreams, inboxWaitsOpen: await openWaits.inboxWaits))
    }
}
