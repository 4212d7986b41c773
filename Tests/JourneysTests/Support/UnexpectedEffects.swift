import CountersignCore
import Foundation
import Journeys
import Testing

/// Journey effects that fail the test on every call: a fake overrides the calls its journeys make, so
/// that a step reaching for anything else (an approval in a journey that should ask for none, say) is
/// a failure rather than a quiet default.
class UnexpectedEffects: JourneyEffects, @unchecked Sendable {
    struct UnexpectedCall: Error {
        let name: String
    }

    private func unexpected(_ name: String, _ location: SourceLocation = #_sourceLocation) -> UnexpectedCall {
        Issue.record("the journey called \(name), which this test does not expect", sourceLocation: location)
        return UnexpectedCall(name: name)
    }

    func findUser(externalUserID: String) async throws -> UserContext? { throw unexpected("findUser") }
    func createUser(externalUserID: String, email: String?) async throws -> UserContext? { throw unexpected("createUser") }
    func redeemEnrollmentCode(_ code: String) async throws -> UserContext? { throw unexpected("redeemEnrollmentCode") }
    func issueEnrollmentCode(for user: UserContext, lifetime: TimeInterval) async throws -> IssuedEnrollmentCode? {
        throw unexpected("issueEnrollmentCode")
    }
    func withdrawEnrollmentCode(_ id: String) async throws { throw unexpected("withdrawEnrollmentCode") }
    func storeBiometricKeys(_ keys: [BiometricKeyRegistration], onDevice deviceID: String?) async throws {
        throw unexpected("storeBiometricKeys")
    }
    func activeBiometricKey(externalUserID: String, publicKeyID: String) async throws -> BiometricCredential? {
        throw unexpected("activeBiometricKey")
    }
    func registerDevice(_ registration: DeviceRegistration) async throws -> String { throw unexpected("registerDevice") }
    func issueToken(_ request: TokenRequest) async throws -> String { throw unexpected("issueToken") }
    func rememberBrowser(of user: UserContext) async throws -> String { throw unexpected("rememberBrowser") }
    func recordTransactionSignature(_ signature: TransactionSignature) async throws -> String {
        throw unexpected("recordTransactionSignature")
    }
    func activeDevices(ofUser externalUserID: String) async throws -> (user: UserContext, devices: [DeviceSummary])? {
        throw unexpected("activeDevices")
    }
    func createApproval(_ request: ApprovalRequest) async throws -> String { throw unexpected("createApproval") }
    func createDecoyApproval(_ request: DecoyApprovalRequest) async throws -> String { throw unexpected("createDecoyApproval") }
    func approval(_ approvalID: String) async throws -> ApprovalSnapshot? { throw unexpected("approval") }
    func resendApproval(_ approvalID: String, limits: ApprovalLimits) async throws { throw unexpected("resendApproval") }
    func cancelApproval(_ approvalID: String) async throws { throw unexpected("cancelApproval") }
    func settleApproval(approvalID: String, outcome: ApprovalOutcome) async throws { throw unexpected("settleApproval") }
    func checkApprovalOTP(approvalID: String, code: String) async throws -> OTPCheck { throw unexpected("checkApprovalOTP") }
}
