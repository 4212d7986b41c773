import CountersignCore
import Foundation
import Push

/// An approval with the name of its application, which its push shows.
struct AddressedApproval: Sendable {
    let approval: ApprovalRecord
    let applicationName: String

    /// What the phone receives: string values only, no personal data.
    var pushNotification: PushNotification {
        PushNotification(
            title: applicationName, body: "Approve the sign-in request",
            payload: [
                "approval_id": approval.id, "client_id": approval.nativeClientID,
                "expires_at": approval.expiresAt.formatted(.iso8601), "application": applicationName,
            ],
            expiresAt: approval.expiresAt, collapseID: approval.id)
    }
}

extension DeviceRecord {
    /// Where pushes for this device go.
    var pushTarget: PushTarget {
        PushTarget(deviceID: id, channel: PushChannel(rawValue: pushChannel) ?? .inbox, token: pushToken, appID: pushAppID)
    }
}
