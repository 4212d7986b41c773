import CountersignCore
import FluentSQL
import Journeys
import Vapor

/// `GET /admin/v1/stats`: how many records the server holds, to watch load and the expiry sweep.
struct StatsRoutes: RouteCollection {
    let verifier: AdminKeyVerifier
    let clock: any WallClock

    func boot(routes: any RoutesBuilder) throws {
        routes.grouped("admin", "v1").grouped(AdminAuthenticationMiddleware(verifier: verifier)).get("stats", use: stats)
    }

    struct Stats: Codable {
        /// Approvals waiting for a phone now (pending, not past expiry).
        let approvalsPending: Int
        /// Approvals stored, in any state, until the sweep removes them.
        let approvalsStored: Int
        let interactionsStored: Int
        let pushJobsQueued: Int
        let pushJobsStored: Int
        let pushDeliveriesStored: Int
        let usedDeviceSignaturesStored: Int

        enum CodingKeys: String, CodingKey {
            case approvalsPending = "approvals_pending"
            case approvalsStored = "approvals_stored"
            case interactionsStored = "interactions_stored"
            case pushJobsQueued = "push_jobs_queued"
            case pushJobsStored = "push_jobs_stored"
            case pushDeliveriesStored = "push_deliveries_stored"
            case usedDeviceSignaturesStored = "used_device_signatures_stored"
        }
    }

    func stats(request: Request) async throws -> Response {
        let sql = try request.db.sql
        let now = clock.now()
        func count(_ table: String, where condition: SQLQueryString = "1 = 1") async throws -> Int {
            try await sql.raw("SELECT COUNT(*) AS n FROM \(ident: table) WHERE \(condition)").first(decodingColumn: "n", as: Int.self) ?? 0
        }
        return try .wire(Stats(
            approvalsPending: try await count(
                ApprovalRecord.schema, where: "status = \(bind: ApprovalStatus.pending.rawValue) AND expires_at > \(bind: now)"),
            approvalsStored: try await count(ApprovalRecord.schema),
            interactionsStored: try await count(InteractionRecord.schema),
            pushJobsQueued: try await count(PushJobModel.schema, where: "status = \(bind: PushStatus.queued.rawValue)"),
            pushJobsStored: try await count(PushJobModel.schema),
            pushDeliveriesStored: try await count(PushDeliveryModel.schema),
            usedDeviceSignaturesStored: try await count(UsedDeviceSignatures.schema)))
    }
}
