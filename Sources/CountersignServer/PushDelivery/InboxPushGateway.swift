import CountersignCore
import Push

/// The inbox channel: nothing leaves the server; the device's waiting long-poll is woken and reads its
/// pending approvals.
struct InboxPushGateway: PushGateway {
    let events: any EventBus

    func send(_ notification: PushNotification, to target: PushTarget) async -> DeliveryOutcome {
        await ring(deviceID: target.deviceID, approvalID: notification.payload["approval_id"] ?? "")
        return .delivered
    }

    /// Wakes the device's waiting long-poll.
    func ring(deviceID: String, approvalID: String) async {
        await events.publish(EventTopic.device(deviceID), approvalID)
    }
}
