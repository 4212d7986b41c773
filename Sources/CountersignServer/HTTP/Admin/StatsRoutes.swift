import CountersignCore
import Foundation
import Hummingbird

/// `GET /admin/v1/stats`: how many records the server holds, to watch load and the expiry sweep;
/// `GET /admin/v1/stats/approvals?hours=…`: how the approvals of the last hours ended, hour by hour.
struct StatsRoutes: RouteGroup {
    let verifier: AdminAccess
    let storage: Storage
    let openWaits: OpenWaits
    let clock: any WallClock

    func register(on router: Router<ServerRequestContext>) {
        let admin = router.adminAPI(verifier)
        admin.get("stats", use: stats)
        admin.get("stats/approvals", use: approvalsByHour)
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

    /// The most hours `stats/approvals` covers: a week.
    static let longestSpan = 168

    struct HourOfApprovals: Encodable {
        let start: Date
        /// Approvals created in the hour, by their status now.
        let outcomes: [String: Int]
    }

    /// Every hour of the span, the current one last, empty hours included so that a chart has no gaps.
    func approvalsByHour(request: Request, context: ServerRequestContext) async throws -> Response {
        let hours = try request.query("hours").map { raw in
            guard let hours = Int(raw), (1...Self.longestSpan).contains(hours) else {
                throw ServiceError.notValid("'hours' must be a whole number from 1 to \(Self.longestSpan).")
            }
            return hours
        } ?? 24
        let currentHour = Int(clock.now().timeIntervalSince1970 / 3600)
        let firstHour = currentHour - hours + 1
        var outcomes: [Int: [String: Int]] = [:]
        for row in try await storage.approvals.countsByHour(since: Date(timeIntervalSince1970: TimeInterval(firstHour * 3600))) {
            outcomes[row.hour, default: [:]][row.status] = row.count
        }
        return try .wire(["hours": (firstHour...currentHour).map {
            HourOfApprovals(start: Date(timeIntervalSince1970: TimeInterval($0 * 3600)), outcomes: outcomes[$0] ?? [:])
        }])
    }
}
