import CountersignCore
import Foundation

/// A push saved with the approval it belongs to: its job, and for the inbox its delivery already made.
struct QueuedPush: Sendable {
    let job: PushJobRecord
    let delivery: PushDeliveryRecord?

    /// The approval's push to `device`: for a provider, queued and due at once; for the inbox, sent, with
    /// its delivery already made.
    init(approvalID: String, device: DeviceRecord, at now: Date) {
        let isInbox = device.pushTarget.channel == .inbox
        job = PushJobRecord(
            id: SecureRandom.identifier(prefix: "psh"), approvalID: approvalID, deviceID: device.id, channel: device.pushChannel,
            status: (isInbox ? PushStatus.sent : PushStatus.queued).rawValue, attempts: isInbox ? 1 : 0, nextAttemptAt: now, lease: nil,
            createdAt: now)
        delivery = isInbox ? PushDeliveryRecord(of: job, attempt: 1, at: now, status: .delivered) : nil
    }
}
