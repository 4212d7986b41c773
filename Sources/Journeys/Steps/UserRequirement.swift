import CountersignCore

extension StepEnvironment {
    /// The failure a step takes when it needs a user and the journey has not identified one.
    static let noUser = StepEntry.outcome(.failure(noUserError))
    private static let noUserError = WireError(code: ErrorCode.userNotFound, message: "The journey has not identified a user yet.")

    /// Enters a registration step with the user it may bind keys to: one this run created or proved (an
    /// enrollment code, a sign-in). A user the client only named fails the step with
    /// `enrollment_required`, except in a development-only journey, which trusts what it is told. So does
    /// the user of a mobile approve journey until the person has signed in it with a biometric key they
    /// have: the device key (`hwk`) proves only the phone, and the web code only that its holder saw the
    /// page, which whoever holds the phone and started the request did.
    func enrolling(_ state: InteractionState, _ present: (UserContext) async throws -> StepEntry) async rethrows -> StepEntry {
        guard let user = state.user else { return Self.noUser }
        if let refusal = onlyNamedUserRefusal(state) { return refusal }
        if state.approvalID != nil, !state.amr.contains(BiometricsAuthenticationStep.method) {
            return .outcome(.failure(Self.enrollmentRequiredError))
        }
        return try await present(user)
    }

    /// The failure of a step that would act for a user the client only named (bind a phone to them, hand
    /// out their token); nil when the run created or proved its user, or the journey is development-only
    /// and trusts what it is told.
    func onlyNamedUserRefusal(_ state: InteractionState) -> StepEntry? {
        guard state.userOnlyNamed == true, !journeyIsDevelopmentOnly else { return nil }
        return .outcome(.failure(Self.enrollmentRequiredError))
    }

    /// A journey named a user who exists, without the proof that lets it act for them.
    static let enrollmentRequiredError = WireError(
        code: ErrorCode.enrollmentRequired,
        message: "This user already exists: acting for them needs proof, such as an enrollment code or the approval of a registered phone.")
}
