import CountersignCore
import Fluent
import Foundation
import Journeys
import Push

extension ApprovalModel {
    /// The status as of `now`: a pending approval past its expiry reads as expired.
    func status(at now: Date) -> ApprovalStatus {
        let stored = ApprovalStatus(rawValue: status) ?? .failed
        return stored == .pending && now >= expiresAt ? .expired : stored
    }

    /// Ends the approval if it is still pending; an approval no longer pending is left as it is.
    static func close(
        _ approvalID: String, as status: ApprovalStatus, failureCode: String?, amr: [String] = [], authTime: Date? = nil,
        at now: Date, on database: any Database
    ) async throws {
        try await ApprovalModel.query(on: database)
            .filter(\.$id == approvalID)
            .filter(\.$status == ApprovalStatus.pending.rawValue)
            .set(\.$status, to: status.rawValue)
            .set(\.$failureCode, to: failureCode)
            .set(\.$amr, to: amr.joined(separator: ","))
            .set(\.$authTime, to: authTime)
            .set(\.$resolvedAt, to: now)
            .update()
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
