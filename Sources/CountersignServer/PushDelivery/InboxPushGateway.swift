import CountersignCore
import Push

/// The inbox channel: nothing leaves the server; the device's waiting long-poll is woken with the push's
/// payload, which it answers.
struct InboxPushGateway: PushGateway {
    let events: any EventBus

    func send(_ notification: PushNotification, to target: PushTarget) async -> DeliveryOutcome {
        await ring(deviceID: target.deviceID, payload: notification.payload)
        return .delivered
    }

    /// Wakes the device's waiting long-poll with `payload`.
    func ring(deviceID: String, payload: [String: String]) async {
        await events.publish(EventTopic.device(deviceID), ApprovalRung(payload: payload).message)
    }
}
