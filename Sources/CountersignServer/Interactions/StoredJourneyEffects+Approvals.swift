import CountersignCore
import Foundation
import Journeys

/// Approvals: the journey's side of `ApprovalLifecycle`. Writes wait for the call's commit, and pushes
/// and wake-ups until the writes are committed.
extension StoredJourneyEffects {
    /// One read for the user, their devices and the application the approval for them is made for. A user
    /// this call creates has no device yet. A request the push-fatigue limits refused moments ago, from
    /// the same source, is refused again before anything is read (`RecentRefusals`).
    func activeDevices(ofUser externalUserID: String) async throws -> (user: UserContext, devices: [DeviceSummary])? {
        if let created = createdUser(externalUserID) { return (created.context, []) }
        if let refusal = services.recentRefusals.refusal(for: refusalKey(externalUserID), at: services.clock.now()) { throw refusal }
        let addressees = try await storage.devices.active(ofUser: externalUserID, inApplicationOfClient: clientID)
        applicationRead = addressees?.application
        identifierOwnerRead = (ExternalUserID.canonical(externalUserID), addressees?.identifierOwnerID)
        guard let addressees, let user = addressees.user else { return nil }
        for device in addressees.devices { devicesRead[device.id] = device }
        return (user.context, addressees.devices.map { DeviceSummary(id: $0.id, name: $0.name, canReceivePush: $0.pushTokenInvalidAt == nil) })
    }

    func createApproval(_ request: ApprovalRequest) async throws -> String {
        var device = devicesRead[request.deviceID]
        if device == nil { device = try await storage.devices.find(request.deviceID) }
        guard let device else {
            throw ServiceError(.conflict, ErrorCode.noRegisteredDevices, "The device no longer exists.")
        }
        let application = try await application()
        return try await rememberingRefusal(of: request.user.externalUserID) {
            try await approvals.create(request, webInteractionID: interactionID, origin: origin, device: device, application: application, in: work)
        }
    }

    func createDecoyApproval(_ request: DecoyApprovalRequest) async throws -> String {
        let application = try await application()
        let owner = if let userID = request.userID { userID } else { try await identifierOwner(request.identifier) }
        return try await rememberingRefusal(of: request.identifier) {
            try await approvals.createDecoy(
                request, owner: owner, webInteractionID: interactionID, origin: origin, application: application, in: work)
        }
    }

    /// The user `identifier` names in any application, as read with the devices when it was.
    private func identifierOwner(_ identifier: String) async throws -> String? {
        if let read = identifierOwnerRead, read.identifier == ExternalUserID.canonical(identifier) { return read.userID }
        return try await storage.users.find(externalUserID: identifier)?.id
    }

    private func refusalKey(_ identifier: String) -> RecentRefusals.Key {
        RecentRefusals.Key(clientID: clientID, identifier: identifier, origin: origin)
    }

    /// Runs `create`; a refusal by the push-fatigue limits is remembered for its `Retry-After` once the call
    /// ends with it (as its security event is recorded then: a call worked out on a run another instance
    /// has since moved on ends otherwise).
    private func rememberingRefusal(of identifier: String, _ create: () async throws -> String) async throws -> String {
        do {
            return try await create()
        } catch let refused as RecordedRefusal {
            guard case .tooSoon(let seconds) = refused.refusal.kind else { throw refused }
            let (recentRefusals, key, clock) = (services.recentRefusals, refusalKey(identifier), services.clock)
            throw RecordedRefusal(refusal: refused.refusal) {
                recentRefusals.remember(key, refusedFor: seconds, at: clock.now())
                try await refused.record()
            }
        }
    }

    /// The application of this call's web client, as read with the devices when it was; nil when the
    /// web client no longer exists.
    func application() async throws -> ClientStore.WebClientApplication? {
        if let applicationRead { return applicationRead }
        return try await storage.clients.application(ofWebClient: clientID)
    }

    func approval(_ approvalID: String) async throws -> ApprovalSnapshot? {
        if let approvalRead, approvalRead.id == approvalID { return approvalRead }
        return try await storage.approvals.snapshot(approvalID, at: services.clock.now())
    }

    func resendApproval(_ approvalID: String, limits: ApprovalLimits) async throws {
        // A decoy is pushed to no one, now as at first: `addressed` reads approvals only. Nor is a device
        // revoked since the approval was made, nor a request the phone answered (or that ended) meanwhile:
        // the browser learns how it ended at its next poll.
        guard let approval = try await storage.approvals.addressed(approvalID),
            approval.approval.status(at: services.clock.now()) == .pending,
            let device = try await storage.devices.find(approval.approval.deviceID), device.isActive
        else { return }
        try await approvals.resend(approval, to: device, limits: limits, in: work)
    }

    func cancelApproval(_ approvalID: String) async throws {
        guard let approval = try await storage.approvals.outcome(approvalID) else { return }
        await approvals.cancel(approval, in: work)
    }

    /// Settles the approval as this run already read it, or else read now. An approval gone from the
    /// database (swept after its expiry) refuses the answer as expired, as its close would.
    func settleApproval(approvalID: String, outcome: ApprovalOutcome) async throws {
        var approval = cachedApproval?.id == approvalID ? cachedApproval : nil
        if approval == nil { approval = try await storage.approvals.find(approvalID) }
        guard let approval else { throw ServiceError.approvalNotPending(.expired) }
        cachedApproval = approval
        try await approvals.settle(approval, with: outcome, in: work)
    }

    func checkApprovalOTP(approvalID: String, code: String) async throws -> OTPCheck {
        guard let approval = try await storage.approvals.find(approvalID) else { return .exhausted }
        cachedApproval = approval
        return await approvals.checkOTP(approval, code: code, in: work)
    }
}
