import CountersignCore
import Fluent
import Foundation
import Journeys
import Push

/// Approvals over Fluent, with the same rule as the rest of the effects: writes wait for the commit,
/// and pushes and wake-ups wait until the writes are committed.
extension FluentJourneyEffects {
    func activeDevices(userID: String) async throws -> [DeviceSummary] {
        try await DeviceModel.query(on: database)
            .filter(\.$user.$id == userID)
            .filter(\.$status == CredentialStatus.active.rawValue)
            .sort(\.$createdAt, .descending)
            .all()
            .map { DeviceSummary(id: $0.id!, name: $0.name) }
    }

    func createApproval(_ request: ApprovalRequest) async throws -> String {
        guard let webClient = try await ClientModel.find(request.clientID, on: database),
            let application = try await ApplicationModel.find(webClient.$application.id, on: database)
        else { throw APIError(.conflict, "unknown_client", "The web client no longer exists.") }
        guard let nativeClient = try await ClientModel.query(on: database)
            .filter(\.$application.$id == application.id!)
            .filter(\.$kind == ClientKind.native.rawValue)
            .sort(\.$id)
            .first()
        else {
            throw APIError(.conflict, "no_native_client", "Application '\(application.id!)' has no native client for the phone.")
        }
        guard let device = try await DeviceModel.find(request.deviceID, on: database) else {
            throw APIError(.conflict, "no_registered_devices", "The device no longer exists.")
        }
        let approval = ApprovalModel()
        approval.id = SecureRandom.identifier(prefix: "apr")
        approval.applicationID = application.id!
        approval.webClientID = webClient.id!
        approval.nativeClientID = nativeClient.id!
        approval.webInteractionID = interactionID
        approval.webJourneyID = request.journeyID
        approval.mobileJourneyID = request.mobileJourneyID
        approval.userID = request.user.userID
        approval.deviceID = request.deviceID
        approval.status = ApprovalStatus.pending.rawValue
        approval.amr = ""
        approval.approvalData = request.approvalData.map { Self.jsonText($0.json) }
        approval.additionalData = request.additionalData.map(Self.jsonText)
        approval.correlationID = request.correlationID
        approval.otpHash = request.otp.map { WebOTP.keyedHash(code: $0, approvalID: approval.id!, key: services.otpKey) }
        approval.otpLength = request.otp?.count
        approval.otpAttemptsLeft = request.otp == nil ? 0 : Self.otpAttempts
        approval.expiresAt = request.expiresAt
        hold { database in try await approval.create(on: database) }
        let notification = Self.notification(for: approval, applicationName: application.name)
        let target = PushTarget(deviceID: device.id!, channel: PushChannel(rawValue: device.pushChannel) ?? .inbox, token: device.pushToken, appID: device.pushAppID)
        let push = services.push
        afterCommit { await push.deliver(notification, to: target) }
        return approval.id!
    }

    func approval(_ approvalID: String) async throws -> ApprovalSnapshot? {
        guard let model = try await ApprovalModel.find(approvalID, on: database),
            let user = try await UserModel.find(model.userID, on: database)
        else { return nil }
        var status = ApprovalStatus(rawValue: model.status) ?? .failed
        if status == .pending, services.clock.now() >= model.expiresAt { status = .expired }
        return ApprovalSnapshot(
            id: approvalID, status: status, user: user.context, deviceID: model.deviceID,
            amr: model.amr.split(separator: ",").map(String.init), authTime: model.authTime, failureCode: model.failureCode,
            expiresAt: model.expiresAt, approvalData: try model.approvalData.flatMap(Self.approvalData),
            otpLength: model.otpLength, otpAttemptsLeft: model.otpAttemptsLeft)
    }

    func resendApproval(_ approvalID: String) async throws {
        guard let approval = try await ApprovalModel.find(approvalID, on: database),
            let device = try await DeviceModel.find(approval.deviceID, on: database),
            let application = try await ApplicationModel.find(approval.applicationID, on: database)
        else { return }
        let notification = Self.notification(for: approval, applicationName: application.name)
        let target = PushTarget(deviceID: device.id!, channel: PushChannel(rawValue: device.pushChannel) ?? .inbox, token: device.pushToken, appID: device.pushAppID)
        let push = services.push
        afterCommit { await push.deliver(notification, to: target) }
    }

    func cancelApproval(_ approvalID: String) async throws {
        try await close(approvalID, status: .cancelled, failureCode: ErrorCode.cancelled)
    }

    func settleApproval(approvalID: String, outcome: ApprovalOutcome) async throws {
        switch outcome {
        case .approved(let amr, let authTime):
            let now = services.clock.now()
            hold { database in
                try await ApprovalModel.query(on: database)
                    .filter(\.$id == approvalID)
                    .filter(\.$status == ApprovalStatus.pending.rawValue)
                    .set(\.$status, to: ApprovalStatus.approved.rawValue)
                    .set(\.$amr, to: amr.joined(separator: ","))
                    .set(\.$authTime, to: authTime)
                    .set(\.$resolvedAt, to: now)
                    .update()
            }
            try await wakeWebInteraction(of: approvalID)
        case .denied:
            try await close(approvalID, status: .denied, failureCode: "mobile_rejected")
        case .failed(let code):
            try await close(approvalID, status: .failed, failureCode: code)
        }
    }

    func checkApprovalOTP(approvalID: String, code: String) async throws -> OTPCheck {
        guard let approval = try await ApprovalModel.find(approvalID, on: database), let hash = approval.otpHash,
            approval.status == ApprovalStatus.pending.rawValue, approval.otpAttemptsLeft > 0
        else { return .exhausted }
        if WebOTP.matches(code: code, approvalID: approvalID, storedHash: hash, key: services.otpKey) { return .valid }
        let left = approval.otpAttemptsLeft - 1
        hold { database in
            try await ApprovalModel.query(on: database).filter(\.$id == approvalID).set(\.$otpAttemptsLeft, to: left).update()
        }
        guard left > 0 else {
            try await close(approvalID, status: .failed, failureCode: "otp_attempts_exceeded")
            return .exhausted
        }
        return .invalid(attemptsLeft: left)
    }

    /// Wrong web OTPs an approval accepts.
    static let otpAttempts = 3

    /// Ends a pending approval with `status` and wakes the browser waiting on it.
    private func close(_ approvalID: String, status: ApprovalStatus, failureCode: String) async throws {
        let now = services.clock.now()
        hold { database in
            try await ApprovalModel.query(on: database)
                .filter(\.$id == approvalID)
                .filter(\.$status == ApprovalStatus.pending.rawValue)
                .set(\.$status, to: status.rawValue)
                .set(\.$failureCode, to: failureCode)
                .set(\.$resolvedAt, to: now)
                .update()
        }
        try await wakeWebInteraction(of: approvalID)
    }

    private func wakeWebInteraction(of approvalID: String) async throws {
        guard let approval = try await ApprovalModel.find(approvalID, on: database) else { return }
        let events = services.events
        let topic = EventTopic.interaction(approval.webInteractionID)
        afterCommit { await events.publish(topic, approvalID) }
    }

    /// The push payload: string values only, no personal data.
    static func notification(for approval: ApprovalModel, applicationName: String) -> PushNotification {
        PushNotification(
            title: applicationName, body: "Approve the sign-in request",
            payload: [
                "approval_id": approval.id!, "client_id": approval.nativeClientID,
                "expires_at": ISO8601DateFormatter().string(from: approval.expiresAt), "application": applicationName,
            ],
            expiresAt: approval.expiresAt, collapseID: approval.id!)
    }

    static func jsonText(_ value: JSONValue) -> String {
        String(decoding: (try? JSONEncoder.wire.encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }

    static func approvalData(_ text: String) throws -> ApprovalData? {
        guard case .object(let members) = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else { return nil }
        return try ApprovalData(json: members)
    }
}
