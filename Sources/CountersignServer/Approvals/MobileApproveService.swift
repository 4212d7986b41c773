import CountersignCore
import Foundation
import Journeys

/// `POST /v1/mobile-approve/start`: a phone that received an approval proves it is the selected device
/// and starts the approval's mobile journey.
struct MobileApproveService: Sendable {
    let interactions: InteractionService
    let verifier: DeviceSignatureVerifier
    let storage: Storage
    let clock: any WallClock

    func start(_ request: MobileApproveStartRequest, origin: RequestOrigin) async throws -> InteractionService.Reply {
        guard let approvalID = request.payload["approval_id"] else { throw ServiceError.notValid("payload.approval_id is missing.") }
        // The approval, its user, what its first step shows and the device asking, in one read; the
        // journey reuses it.
        guard let (addressed, snapshot, askingDevice) = try await storage.approvals.addressedSnapshot(
            approvalID, askedBy: request.deviceID, at: clock.now()), let user = snapshot.user
        else {
            throw ServiceError.notFound("No approval '\(approvalID)'.")
        }
        let (device, signatureUse) = try verifier.check(
            askingDevice, message: DeviceProof.approveMessage(approvalID: approvalID, timestamp: request.timestamp),
            timestamp: request.timestamp, signature: request.deviceSignature)
        do {
            return try await begin(request, addressed: addressed, snapshot: snapshot, user: user, device: device, origin: origin, committing: signatureUse)
        } catch let refusal as ServiceError where refusal.code != ErrorCode.signatureReplayed {
            // A refused start uses its signature as an accepted one does: sent again, it is a replay. A
            // signature used before is refused as that, as it would have been before any other check.
            try await storage.commit([.statement(signatureUse)])
            throw refusal
        }
    }

    /// The approval's mobile journey for `device`, whose signature checked, once the approval is its to
    /// answer; `signatureUse` is committed with the new interaction.
    private func begin(
        _ request: MobileApproveStartRequest, addressed: AddressedApproval, snapshot: ApprovalSnapshot, user: UserContext,
        device: DeviceRecord, origin: RequestOrigin, committing signatureUse: DeferredStatement
    ) async throws -> InteractionService.Reply {
        let approval = addressed.approval
        guard device.userID == approval.userID else {
            throw ServiceError(.forbidden, ErrorCode.deviceNotOwned, "The device does not belong to the user of this approval.")
        }
        guard device.isActive else {
            throw ServiceError.deviceRevoked
        }
        guard device.id == approval.deviceID else {
            throw ServiceError(.forbidden, ErrorCode.deviceNotSelected, "The approval was sent to another device.")
        }
        // As of now, after the signature check: an approval that expired meanwhile is refused.
        let status = approval.status(at: clock.now())
        guard status == .pending else { throw ServiceError.approvalNotPending(status) }
        // The approval names the native client its phone uses; any other client is refused.
        guard request.clientID == approval.nativeClientID else {
            throw ServiceError(.forbidden, ErrorCode.clientNotInApplication, "The approval is for the application's phone client '\(approval.nativeClientID)'.")
        }
        guard let journey = interactions.journeys[approval.mobileJourneyID] else {
            throw ServiceError.notFound("The approval's mobile journey is not available.")
        }

        var state = InteractionState(
            journeyID: journey.id, clientID: approval.nativeClientID, correlationID: approval.correlationID,
            mobileApproveParameters: try parameters(of: addressed, user: user))
        state.user = user
        state.deviceID = device.id
        state.approvalID = approval.id
        state.addAuthenticationMethod("hwk", at: clock.now())
        return try await interactions.begin(
            journey, state: state, origin: origin, approvalRead: snapshot, cachedApproval: approval,
            committing: signatureUse)
    }

    /// What `@policy.getMobileApproveParameters()` reads.
    private func parameters(of addressed: AddressedApproval, user: UserContext) throws -> [String: JSONValue] {
        let approval = addressed.approval
        func json(_ text: String?) throws -> JSONValue {
            guard let text else { return .null }
            return try WireJSON.stored(text)
        }
        return [
            "approval_data": try json(approval.approvalData),
            "authorization_request": try json(approval.authorizationRequest),
            "additional_data": try json(approval.additionalData),
            "request_context": try ApprovalRequestContext.of(addressed),
            "correlation_id": approval.correlationID.map { .string($0) } ?? .null,
            "device_id": .string(approval.deviceID),
            "external_user_id": .string(user.externalUserID),
            "journey_id": .string(approval.webJourneyID),
            "user_id": .string(approval.userID),
        ]
    }
}
