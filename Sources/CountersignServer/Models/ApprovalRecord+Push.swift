import CountersignCore
import Fluent
import Foundation
import Journeys
import Push
import FluentSQL

extension ApprovalRecord {
    /// What the phone receives: string values only, no personal data.
    func pushNotification(applicationName: String) -> PushNotification {
        PushNotification(
            title: applicationName, body: "Approve the sign-in request",
            payload: [
                "approval_id": id, "client_id": nativeClientID,
                "expires_at": ISO8601DateFormatter().string(from: expiresAt), "application": applicationName,
            ],
            expiresAt: expiresAt, collapseID: id)
    }
}

extension DeviceModel {
    /// Where pushes for this device go.
    var pushTarget: PushTarget {
        PushTarget(deviceID: id!, channel: PushChannel(rawValue: pushChannel) ?? .inbox, token: pushToken, appID: pushAppID)
    }
}
