import CountersignCore
import Push

/// The inbox channel: nothing leaves the server; the device's waiting long-poll is woken and reads its
/// pending approvals.
struct InboxPushGateway: PushGateway {
    let events: any EventBus

    func send(_ notification: PushNotification, to target: PushTarget) async -> DeliveryOutcome {
        await events.publish(EventTopic.device(target.deviceID), notification.payload["approval_id"] ?? "")
        return .delivered
    }
}
