import CountersignCore
import Fluent
import FluentSQL
import Foundation
import Journeys

/// Approvals: the journey's side of `ApprovalLifecycle`. Writes wait for the call's commit, and pushes
/// and wake-ups until the writes are committed.
extension FluentJourneyEffects {
    func activeDevices(userID: String) async throws -> [DeviceSummary] {
        let devices = try await DeviceModel.active(ofUser: userID, on: try database.sql)
        for device in devices { devicesRead[device.id!] = device }
        return devices.map { DeviceSummary(id: $0.id!, name: $0.name, canReceivePush: $0.pushTokenInvalidAt == nil) }
    }

    func createApproval(_ request: ApprovalRequest) async throws -> String {
        var device = devicesRead[request.deviceID]
        if device == nil { device = try await DeviceModel.load(request.deviceID, on: try database.sql) }
        guard let device else {
            throw ServiceError(.conflict, ErrorCode.noRegisteredDevices, "The device no longer exists.")
        }
        return try await approvals.create(request, webInteractionID: interactionID, device: device, in: work)
    }

    func approval(_ approvalID: String) async throws -> ApprovalSnapshot? {
        try await ApprovalRecord.snapshot(approvalID, at: services.clock.now(), on: try database.sql)
    }

    func resendApproval(_ approvalID: String) async throws {
        guard let approval = try await ApprovalRecord.find(approvalID, on: try database.sql),
            let device = try await DeviceModel.load(approval.deviceID, on: try database.sql)
        else { return }
        await approvals.resend(approval.id, to: device, in: work)
    }

    func cancelApproval(_ approvalID: String) async throws {
        guard let approval = try await ApprovalRecord.find(approvalID, on: try database.sql), firstClose(of: approvalID) else { return }
        await approvals.close(approval, as: .cancelled, failureCode: ErrorCode.cancelled, in: work)
    }

    func settleApproval(approvalID: String, outcome: ApprovalOutcome) async throws {
        guard let approval = try await ApprovalRecord.find(approvalID, on: try database.sql), firstClose(of: approvalID) else { return }
        try await approvals.settle(approval, with: outcome, in: work)
    }

    func checkApprovalOTP(approvalID: String, code: String) async throws -> OTPCheck {
        guard let approval = try await ApprovalRecord.find(approvalID, on: try database.sql) else { return .exhausted }
        let check = await approvals.checkOTP(approval, code: code, in: work)
        // The last wrong code closed the approval; the rejection that follows in this call must not close it again.
        if check == .exhausted { _ = firstClose(of: approvalID) }
        return check
    }
}
