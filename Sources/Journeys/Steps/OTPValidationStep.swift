import CountersignCore

/// `otp_validation`, in a mobile approve journey: the person types the code the browser shows.
/// A right code adds `code_otp` to the methods proven; after the approval's last wrong try the
/// approval fails and the step takes its failure branch.
struct OTPValidationStep: StepBehavior {
    var isPhoneOnly: Bool { true }

    static let method = "code_otp"

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        guard let approvalID = state.approvalID, let approval = try await environment.effects.approval(approvalID),
            let length = approval.otpLength
        else {
            return .outcome(.failure(WireError(code: ErrorCode.otpNotAvailable, message: "The request has no web code to check.")))
        }
        return .present(
            journeyStepID: JourneyStepID.otpValidation,
            data: ["code_length": .number(Double(length)), "attempts_left": .number(Double(approval.otpAttemptsLeft))],
            secrets: [:])
    }

    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        let passcode = try ClientInput(input).string("passcode")
        guard let approvalID = state.approvalID else { throw ClientResponseNotValid("no approval is linked") }
        switch try await environment.effects.checkApprovalOTP(approvalID: approvalID, code: passcode) {
        case .valid:
            state.addAuthenticationMethod(Self.method, at: environment.now)
            return .next(output: ["validated": true])
        case .invalid(let attemptsLeft):
            var data = state.current?.data?.objectValue ?? [:]
            data["attempts_left"] = .number(Double(attemptsLeft))
            return .stay(data: .object(data), secrets: environment.secrets, error: .invalidCredentials(
                "The code is not the one the browser shows. \(attemptsLeft) attempts left."))
        case .exhausted:
            return .failure(.invalidCredentials("The code was wrong too many times."))
        }
    }
}
