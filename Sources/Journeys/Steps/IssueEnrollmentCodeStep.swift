import CountersignCore
import Foundation

/// `issue_enrollment_code` (journey step id `enrollment_code_issued`), in a web journey: shows the
/// signed-in user a one-time code for a new phone, as text, as the enrollment link and as its QR code.
/// The code is redeemable through the native client of the web client's application, by the
/// `enrollment_code` step of that phone's registration journey. The user must be one this run signed in
/// or created: a user the browser only named gets `enrollment_required`.
///
/// Config: `expires_in` (seconds, 1–86400, default 600, as for codes the admin API issues). The browser continues with `client_input` once
/// the phone has scanned the code; leaving the step any other way (cancel, failure, a branch) withdraws
/// the code, so someone who saw it cannot use it after the person changed their mind.
struct IssueEnrollmentCodeStep: StepBehavior {
    static let expiresIn = ConfigKey.number(
        "expires_in", default: EnrollmentCode.defaultLifetime, in: 1...EnrollmentCode.longestLifetime)

    var configuration: StepConfiguration { StepConfiguration(keys: [Self.expiresIn.rule]) }

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        try await environment.enrolling(state) { user in
            let lifetime = environment[Self.expiresIn]
            guard let issued = try await environment.effects.issueEnrollmentCode(for: user, lifetime: TimeInterval(lifetime))
            else {
                return .outcome(.failure(WireError(
                    code: ErrorCode.invalidClient, message: "The application has no native client for a phone to enroll through.")))
            }
            return .present(
                journeyStepID: JourneyStepID.enrollmentCodeIssued,
                data: [
                    "enrollment_code": .string(issued.code), "expires_at": .string(issued.expiresAt.formatted(.iso8601)),
                    "enrollment_uri": .string(issued.enrollmentURI), "enrollment_qr_svg": .string(issued.qrCodeSVG),
                ],
                secrets: [Self.codeIDSecret: issued.id])
        }
    }

    func cancel(_ state: inout InteractionState, _ environment: StepEnvironment) async throws {
        guard let id = environment.secrets[Self.codeIDSecret] else { return }
        try await environment.effects.withdrawEnrollmentCode(id)
    }

    private static let codeIDSecret = "enrollment_code_id"

    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        .next(output: [:])
    }
}
