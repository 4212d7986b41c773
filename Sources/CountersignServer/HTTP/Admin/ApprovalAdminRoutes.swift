import Foundation
import Hummingbird

/// `GET /admin/v1/approvals?limit=…&after=…`: the newest approvals and how each ended, newest first.
struct ApprovalAdminRoutes: RouteGroup {
    let verifier: AdminAccess
    let storage: Storage

    func register(on router: Router<ServerRequestContext>) {
        router.adminAPI(verifier).get("approvals", use: list)
    }

    struct ApprovalView: Encodable {
        let id: String
        let userID: String
        let applicationID: String
        let journeyID: String
        let mobileJourneyID: String
        let deviceID: String
        let status: String
        /// Why it failed, when it did (`otp_attempts_exceeded`, `not_me`…).
        let reason: String?
        let createdAt: Date
        let expiresAt: Date

        init(_ approval: ApprovalRecord) {
            id = approval.id
            userID = approval.userID
            applicationID = approval.applicationID
            journeyID = approval.webJourneyID
            mobileJourneyID = approval.mobileJourneyID
            deviceID = approval.deviceID
            status = approval.status
            reason = approval.failureCode
            createdAt = approval.createdAt
            expiresAt = approval.expiresAt
        }

        enum CodingKeys: String, CodingKey {
            case id, status, reason
            case userID = "user_id"
            case applicationID = "application_id"
            case journeyID = "journey_id"
            case mobileJourneyID = "mobile_journey_id"
            case deviceID = "device_id"
            case createdAt = "created_at"
            case expiresAt = "expires_at"
        }
    }

    func list(request: Request, context: ServerRequestContext) async throws -> Response {
        let page = try request.listPage()
        return try .wire(["approvals": try await storage.approvals.newest(after: page.after, limit: page.limit).map(ApprovalView.init)])
    }
}
