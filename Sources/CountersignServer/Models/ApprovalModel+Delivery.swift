import CountersignCore
import Fluent
import Foundation
import Journeys
import Push
import FluentSQL

extension ApprovalModel {
    /// The status as of `now`: a pending approval past its expiry reads as expired.
    func status(at now: Date) -> ApprovalStatus {
        let stored = ApprovalStatus(rawValue: status) ?? .failed
        return stored == .pending && now >= expiresAt ? .expired : stored
    }

    /// Ends the approval if it is still open: pending and not past its expiry. Returns whether this
    /// call ended it; an approval already settled, cancelled or expired is left as it is.
    @discardableResult
    static func close(
        _ approvalID: String, as status: ApprovalStatus, failureCode: String?, amr: [String] = [], authTime: Date? = nil,
        at now: Date, on database: any Database
    ) async throws -> Bool {
        guard let sql = database as? any SQLDatabase else { throw InteractionStoreError.notSQL }
        let closed = try await sql.raw("""
            UPDATE \(ident: schema)
            SET status = \(bind: status.rawValue), failure_code = \(bind: failureCode), amr = \(bind: amr.joined(separator: ",")),
                auth_time = \(bind: authTime), resolved_at = \(bind: now)
            WHERE id = \(bind: approvalID) AND status = \(bind: ApprovalStatus.pending.rawValue) AND expires_at > \(bind: now)
            RETURNING id
            """).all()
        return !closed.isEmpty
    }

    /// What the phone receives: string values only, no personal data.
    func pushNotification(applicationName: String) -> PushNotification {
        PushNotification(
            title: applicationName, body: "Approve the sign-in request",
            payload: [
                "approval_id": id!, "client_id": nativeClientID,
                "expires_at": ISO8601DateFormatter().string(from: expiresAt), "application": applicationName,
            ],
            expiresAt: expiresAt, collapseID: id!)
    }
}

extension DeviceModel {
    /// Where pushes for this device go.
    var pushTarget: PushTarget {
        PushTarget(deviceID: id!, channel: PushChannel(rawValue: pushChannel) ?? .inbox, token: pushToken, appID: pushAppID)
    }
}
