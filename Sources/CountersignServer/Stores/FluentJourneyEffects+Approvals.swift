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
        let devices = try await DeviceModel.active(ofUser: userID, on: try database.sql)
        for device in devices { devicesRead[device.id!] = device }
        return devices.map { DeviceSummary(id: $0.id!, name: $0.name, canReceivePush: $0.pushTokenInvalidAt == nil) }
    }

    func createApproval(_ request: ApprovalRequest) async throws -> String {
        let sql = try database.sql
        guard let clients = try await sql.raw("""
            SELECT web.application_id, (
                SELECT native.id FROM clients native
                WHERE native.application_id = web.application_id AND native.kind = \(bind: ClientKind.native.rawValue)
                ORDER BY native.id LIMIT 1) AS native_client_id
            FROM clients web WHERE web.id = \(bind: request.clientID)
            """).first()
        else {
            throw ServiceError(.conflict, ErrorCode.unknownClient, "The web client no longer exists.")
        }
        let applicationID = try clients.decode(column: "application_id", as: String.self)
        guard let nativeClientID = try clients.decode(column: "native_client_id", as: String?.self) else {
            throw ServiceError(.conflict, ErrorCode.noNativeClient, "Application '\(applicationID)' has no native client for the phone.")
        }
        var device = devicesRead[request.deviceID]
        if device == nil { device = try await DeviceModel.load(request.deviceID, on: sql) }
        guard let device else {
            throw ServiceError(.conflict, ErrorCode.noRegisteredDevices, "The device no longer exists.")
        }
        let approvalID = SecureRandom.identifier(prefix: "apr")
        let now = services.clock.now()
        let approval = ApprovalRecord(
            id: approvalID, applicationID: applicationID, webClientID: request.clientID, nativeClientID: nativeClientID,
            webInteractionID: interactionID, webJourneyID: request.journeyID, mobileJourneyID: request.mobileJourneyID,
            userID: request.user.userID, deviceID: request.deviceID, status: ApprovalStatus.pending.rawValue, failureCode: nil,
            amr: "", authTime: nil, approvalData: request.approvalData?.canonicalJSON, additionalData: request.additionalData.map(Self.jsonText),
            correlationID: request.correlationID,
            otpHash: request.otp.map { WebOTP.keyedHash(code: $0, approvalID: approvalID, key: services.otpKey) },
            otpLength: request.otp?.count, otpAttemptsLeft: request.otp == nil ? 0 : Self.otpAttempts, expiresAt: request.expiresAt,
            createdAt: now)
        hold { database in try await approval.insert(on: try database.sql) }
        queuePush(of: approvalID, to: device)
        return approvalID
    }

    func approval(_ approvalID: String) async throws -> ApprovalSnapshot? {
        try await ApprovalRecord.snapshot(approvalID, at: services.clock.now(), on: try database.sql)
    }

    func resendApproval(_ approvalID: String) async throws {
        guard let approval = try await ApprovalRecord.find(approvalID, on: try database.sql),
            let device = try await DeviceModel.load(approval.deviceID, on: try database.sql)
        else { return }
        queuePush(of: approval.id, to: device)
    }

    func cancelApproval(_ approvalID: String) async throws {
        guard let approval = try await ApprovalRecord.find(approvalID, on: try database.sql) else { return }
        close(approval, as: .cancelled, failureCode: ErrorCode.cancelled)
    }

    func settleApproval(approvalID: String, outcome: ApprovalOutcome) async throws {
        guard let approval = try await ApprovalRecord.find(approvalID, on: try database.sql) else { return }
        switch outcome {
        case .approved(let amr, let authTime, let signedApprovalData):
            // Details shown in the browser count as approved only when the phone signed exactly them.
            if let shown = try approval.approvalData.map(ApprovalData.init(jsonText:)), shown != signedApprovalData {
                close(approval, as: .failed, failureCode: ErrorCode.approvalDataNotSigned, phoneIsAnswering: true)
            } else {
                close(approval, as: .approved, amr: amr, authTime: authTime, phoneIsAnswering: true)
            }
        case .denied:
            close(approval, as: .denied, failureCode: ErrorCode.mobileRejected, phoneIsAnswering: true)
        case .failed(let code):
            close(approval, as: .failed, failureCode: code, phoneIsAnswering: true)
        }
    }

    func checkApprovalOTP(approvalID: String, code: String) async throws -> OTPCheck {
        guard let approval = try await ApprovalRecord.find(approvalID, on: try database.sql), let hash = approval.otpHash,
            approval.status(at: services.clock.now()) == .pending, approval.otpAttemptsLeft > 0
        else { return .exhausted }
        if WebOTP.matches(code: code, approvalID: approvalID, storedHash: hash, key: services.otpKey) { return .valid }
        let seen = approval.otpAttemptsLeft
        let left = seen - 1
        hold { database in
            // Compare and set: a wrong code counted meanwhile by another interaction makes this call retry,
            // so parallel tries cannot share one attempt.
            let sql = try database.sql
            let counted = try await sql.raw("""
                UPDATE \(ident: ApprovalRecord.schema) SET otp_attempts_left = \(bind: left)
                WHERE id = \(bind: approvalID) AND otp_attempts_left = \(bind: seen)
                RETURNING id
                """).all()
            guard !counted.isEmpty else {
                throw ServiceError(.conflict, ErrorCode.otpAttemptConflict, "Another try of this code was counted at the same time; try again.")
            }
        }
        guard left > 0 else {
            close(approval, as: .failed, failureCode: ErrorCode.otpAttemptsExceeded)
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
        _ approval: ApprovalRecord, as status: ApprovalStatus, failureCode: String? = nil, amr: [String] = [], authTime: Date? = nil,
        phoneIsAnswering: Bool = false
    ) {
        let approvalID = approval.id
        guard approvalsClosed.insert(approvalID).inserted else { return }
        let now = services.clock.now()
        hold { database in
            let sql = try database.sql
            let closed = try await ApprovalRecord.close(
                approvalID, as: status, failureCode: failureCode, amr: amr, authTime: authTime, at: now, on: sql)
            if !closed, phoneIsAnswering {
                throw ServiceError.approvalNotPending(try await ApprovalRecord.status(of: approvalID, at: now, on: sql))
            }
        }
        let events = services.events
        let topic = EventTopic.interaction(approval.webInteractionID)
        afterCommit { await events.publish(topic, approvalID) }
    }

    /// Saves the approval's push in the call's commit and rings once it is committed.
    private func queuePush(of approvalID: String, to device: DeviceModel) {
        let sender = services.pushSender
        let push = sender.push(approvalID: approvalID, device: device)
        let now = services.clock.now()
        hold { database in try await push.save(on: database, at: now) }
        afterCommit { await sender.ring(push) }
    }

    static func jsonText(_ value: JSONValue) -> String {
        String(decoding: (try? JSONEncoder.wire.encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }
}
