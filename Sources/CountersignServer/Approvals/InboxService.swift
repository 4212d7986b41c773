import CountersignCore
import Foundation

/// The phone's inbox (the push channel with no provider): its pending approvals, read once the device's
/// signature shows the request is the device's, and waited for when there are none.
struct InboxService: Sendable {
    let storage: Storage
    let verifier: DeviceSignatureVerifier
    let events: any EventBus
    let openWaits: OpenWaits
    let clock: any WallClock

    /// What a device signed to read its inbox.
    struct SignedRequest: Sendable {
        let message: String
        let timestamp: Int
        let signature: String
    }

    /// The push payloads waiting for `deviceID`, once `proof` shows the request is the device's. With
    /// `seconds` above zero, a long-poll counted by `OpenWaits`: when nothing is pending, it waits up to
    /// that long for an approval, and answers the payload it is rung with (or reads again when woken
    /// without one).
    func pending(for deviceID: String, _ proof: SignedRequest, waiting seconds: Int) async throws -> [[String: String]] {
        // Subscribed before the first read, so that an approval pushed between that read and the wait is not missed.
        let mailbox = seconds > 0 ? await events.subscribe(EventTopic.device(deviceID)) : nil
        let payloads: Result<[[String: String]], any Error>
        do {
            payloads = .success(try await read(deviceID, proof, waiting: seconds, on: mailbox))
        } catch {
            payloads = .failure(error)
        }
        if let mailbox { await events.unsubscribe(mailbox) }
        return try payloads.get()
    }

    /// The device and its pending approvals are one read, made before the signature is checked and
    /// answered only after.
    private func read(
        _ deviceID: String, _ proof: SignedRequest, waiting seconds: Int, on mailbox: EventMailbox?
    ) async throws -> [[String: String]] {
        let (named, pending) = try await storage.approvals.inbox(ofDevice: deviceID, at: clock.now())
        let (device, signatureUse) = try verifier.check(named, message: proof.message, timestamp: proof.timestamp, signature: proof.signature)
        try await storage.commit([.statement(signatureUse)])
        guard device.status == CredentialStatus.active.rawValue else {
            throw ServiceError.deviceRevoked
        }
        guard let mailbox else { return pending.map(\.pushNotification.payload) }
        try await openWaits.openInboxWait(for: deviceID)
        let event = pending.isEmpty ? await mailbox.nextUnlessStopping(within: .seconds(seconds)) : nil
        await openWaits.closeInboxWait(for: deviceID)
        guard let event else { return pending.map(\.pushNotification.payload) }
        if let rung = ApprovalRung(message: event) { return [rung.payload] }
        return try await storage.approvals.pending(forDevice: deviceID, at: clock.now()).map(\.pushNotification.payload)
    }
}
