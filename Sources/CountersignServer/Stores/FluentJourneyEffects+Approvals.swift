import CountersignCore
import Fluent
import FluentSQL
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
            .map { DeviceSummary(id: $0.id!, name: $0.name, canReceivePush: $0.pushTokenInvalidAt == nil) }
    }

    func createApproval(_ request: ApprovalRequest) async throws -> String {
        guard let webClient = try await ClientModel.find(request.clientID, on: database) else {
            throw APIError(.conflict, "unknown_client", "The web client no longer exists.")
        }
        let applicationID = webClient.$application.id
        guard let nativeClient = try await ClientModel.query(on: database)
            .filter(\.$application.$id == applicationID)
            .filter(\.$kind == ClientKind.native.rawValue)
            .sort(\.$id)
            .first()
        else {
            throw APIError(.conflict, "no_native_client", "Application '\(applicationID)' has no native client for the phone.")
        }
        guard let device = try await DeviceModel.find(request.deviceID, on: database) else {
            throw APIError(.conflict, "no_registered_devices", "The device no longer exists.")
        }
        let approval = ApprovalModel()
        approval.id = SecureRandom.identifier(prefix: "apr")
        approval.applicationID = applicationID
        approval.webClientID = webClient.id!
        approval.nativeClientID = nativeClient.id!
        approval.webInteractionID = interactionID
        approval.webJourneyID = request.journeyID
        approval.mobileJourneyID = request.mobileJourneyID
        approval.userID = request.user.userID
        approval.deviceID = request.deviceID
        approval.status = ApprovalStatus.pending.rawValue
        approval.amr = ""
        approval.approvalData = request.approvalData?.canonicalJSON
        approval.additionalData = request.additionalData.map(Self.jsonText)
        approval.correlationID = request.correlationID
        approval.otpHash = request.otp.map { WebOTP.keyedHash(code: $0, approvalID: approval.id!, key: services.otpKey) }
        approval.otpLength = request.otp?.count
        approval.otpAttemptsLeft = request.otp == nil ? 0 : Self.otpAttempts
        approval.expiresAt = request.expiresAt
        hold { database in try await approval.create(on: database) }
        queuePush(of: approval.id!, to: device)
        return approval.id!
    }

    func approval(_ approvalID: String) async throws -> ApprovalSnapshot? {
        guard let model = try await ApprovalModel.find(approvalID, on: database),
            let user = try await UserModel.find(model.userID, on: database)
        else { return nil }
        let latestPush = try await PushJobModel.query(on: database)
            .filter(\.$approvalID == approvalID).sort(\.$createdAt, .descending).first()
        return ApprovalSnapshot(
            id: approvalID, status: model.status(at: services.clock.now()), user: user.context, deviceID: model.deviceID,
            amr: model.amr.split(separator: ",").map(String.init), authTime: model.authTime, failureCode: model.failureCode,
            expiresAt: model.expiresAt, approvalData: try model.approvalData.map(ApprovalData.init(jsonText:)),
            otpLength: model.otpLength, otpAttemptsLeft: model.otpAttemptsLeft, pushStatus: latestPush?.status)
    }

    func resendApproval(_ approvalID: String) async throws {
        guard let approval = try await ApprovalModel.find(approvalID, on: database),
            let device = try await DeviceModel.find(approval.deviceID, on: database)
        else { return }
        queuePush(of: approval.id!, to: device)
    }

    func cancelApproval(_ approvalID: String) async throws {
        guard let approval = try await ApprovalModel.find(approvalID, on: database) else { return }
        close(approval, as: .cancelled, failureCode: ErrorCode.cancelled)
    }

    func settleApproval(approvalID: String, outcome: ApprovalOutcome) async throws {
        guard let approval = try await ApprovalModel.find(approvalID, on: database) else { return }
        switch outcome {
        case .approved(let amr, let authTime, let signedApprovalData):
            // Details shown in the browser count as approved only when the phone signed exactly them.
            if let shown = try approval.approvalData.map(ApprovalData.init(jsonText:)), shown != signedApprovalData {
                close(approval, as: .failed, failureCode: "approval_data_not_signed", phoneIsAnswering: true)
            } else {
                close(approval, as: .approved, amr: amr, authTime: authTime, phoneIsAnswering: true)
            }
        case .denied:
            close(approval, as: .denied, failureCode: "mobile_rejected", phoneIsAnswering: true)
        case .failed(let code):
            close(approval, as: .failed, failureCode: code, phoneIsAnswering: true)
        }
    }

    func checkApprovalOTP(approvalID: String, code: String) async throws -> OTPCheck {
        guard let approval = try await ApprovalModel.find(approvalID, on: database), let hash = approval.otpHash,
            approval.status(at: services.clock.now()) == .pending, approval.otpAttemptsLeft > 0
        else { return .exhausted }
        if WebOTP.matches(code: code, approvalID: approvalID, storedHash: hash, key: services.otpKey) { return .valid }
        let seen = approval.otpAttemptsLeft
        let left = seen - 1
        hold { database in
            // Compare and set: a wrong code counted meanwhile by another interaction makes this call retry,
            // so parallel tries cannot share one attempt.
            guard let sql = database as? any SQLDatabase else { throw InteractionStoreError.notSQL }
            let counted = try await sql.raw("""
                UPDATE \(ident: ApprovalModel.schema) SET otp_attempts_left = \(bind: left)
                WHERE id = \(bind: approvalID) AND otp_attempts_left = \(bind: seen)
                RETURNING id
                """).all()
            guard !counted.isEmpty else {
                throw APIError(.conflict, "otp_attempt_conflict", "Another try of this code was counted at the same time; try again.")
            }
        }
        guard left > 0 else {
            close(approval, as: .failed, failureCode: "otp_attempts_exceeded")
            return .exhausted
        }
        return .invalid(attemptsLeft: left)
    }

    /// Wrong web OTPs an approval accepts.
    static let otpAttempts = 3

    /// Ends a pending approval and wakes the browser waiting on it once the change is committed. An
    /// approval no longer pending is left as it is; when the phone is answering, that refuses the
    /// whole call (410), so the phone learns the browser cancelled or the approval expired.
    private func close(
        _ approval: ApprovalModel, as status: ApprovalStatus, failureCode: String? = nil, amr: [String] = [], authTime: Date? = nil,
        phoneIsAnswering: Bool = false
    ) {
        let approvalID = approval.id!
        guard approvalsClosed.insert(approvalID).inserted else { return }
        let now = services.clock.now()
        hold { database in
            let closed = try await ApprovalModel.close(
                approvalID, as: status, failureCode: failureCode, amr: amr, authTime: authTime, at: now, on: database)
            if !closed, phoneIsAnswering {
                let current = try await ApprovalModel.find(approvalID, on: database)?.status(at: now) ?? .expired
                throw APIError.approvalNotPending(current)
            }
        }
        let events = services.events
        let topic = EventTopic.interaction(approval.webInteractionID)
        afterCommit { await events.publish(topic, approvalID) }
    }

    /// Queues the approval's push in the call's commit and wakes the sender once it is committed.
    private func queuePush(of approvalID: String, to device: DeviceModel) {
        let sender = services.pushSender
        let job = sender.job(approvalID: approvalID, device: device)
        hold { database in try await job.create(on: database) }
        afterCommit { await sender.wake() }
    }

    static func jsonText(_ value: JSONValue) -> String {
        String(decoding: (try? JSONEncoder.wire.encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }
}
