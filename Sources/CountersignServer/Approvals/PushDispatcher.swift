import CountersignCore
import Logging
import Push

/// Sends approval notifications through the gateway of each device's channel.
struct PushDispatcher: Sendable {
    let gateways: [PushChannel: any PushGateway]
    let logger: Logger

    /// Delivers `notification`; a failed or unconfigured channel is logged, never thrown: the approval
    /// stands and the browser can resend.
    func deliver(_ notification: PushNotification, to target: PushTarget) async {
        guard let gateway = gateways[target.channel] else {
            logger.warning("no push gateway is configured for the device's channel", metadata: [
                "channel": "\(target.channel.rawValue)", "device_id": "\(target.deviceID)",
            ])
            return
        }
        let outcome = await gateway.send(notification, to: target)
        if outcome != .delivered {
            logger.warning("push delivery failed", metadata: [
                "channel": "\(target.channel.rawValue)", "device_id": "\(target.deviceID)", "outcome": "\(outcome)",
            ])
        }
    }
}

/// The inbox channel: nothing leaves the server; the device's waiting long-poll is woken and reads its
/// pending approvals.
struct InboxPushGateway: PushGateway {
    let events: any EventBus

    func send(_ notification: PushNotification, to target: PushTarget) async -> DeliveryOutcome {
        await events.publish(EventTopic.device(target.deviceID), notification.payload["approval_id"] ?? "")
        return .delivered
    }
}
