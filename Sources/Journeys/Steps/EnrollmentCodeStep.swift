import CountersignCore

/// `enrollment_code`, in a phone's registration journey: the person scans or types the one-time code the
/// relying party issued for them. The code names the user the phone's keys are then bound to; a wrong,
/// used or expired code counts as a wrong try.
struct EnrollmentCodeStep: StepBehavior {
    var isPhoneOnly: Bool { true }

    static let inputField = "enrollment_code"

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        .present(journeyStepID: JourneyStepID.enrollmentCode, data: nil, secrets: [:])
    }

    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        let code = try ClientInput(input).string(Self.inputField)
        guard let user = try await environment.effects.redeemEnrollmentCode(code) else {
            return .retry(.invalidCredentials("The enrollment code is wrong, already used or expired."))
        }
        state.actFor(user)
        return .next(output: ["user_id": .string(user.userID), "external_user_id": .string(user.externalUserID)])
    }
}
