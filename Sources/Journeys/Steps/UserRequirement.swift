import CountersignCore

extension StepEnvironment {
    /// The failure a step takes when it needs a user and the journey has not identified one.
    static let noUser = StepEntry.outcome(.failure(noUserError))
    private static let noUserError = WireError(code: ErrorCode.userNotFound, message: "The journey has not identified a user yet.")

    /// Enters a registration step with the user it may bind keys to: one this run created or proved (an
    /// enrollment code, a sign-in). A user the client only named fails the step with
    /// `enrollment_required`, except in a development-only journey, which trusts what it is told.
    func enrolling(_ state: InteractionState, _ present: (UserContext) async throws -> StepEntry) async rethrows -> StepEntry {
        guard let user = state.user else { return Self.noUser }
        if state.userOnlyNamed == true, !journeyIsDevelopmentOnly {
            return .outcome(.failure(Self.enrollmentRequiredError))
        }
        return try await present(user)
    }

    /// A journey named a user who exists, without the proof that lets it bind a phone to them.
    static let enrollmentRequiredError = WireError(
        code: ErrorCode.enrollmentRequired,
        message: "This user already exists: a new phone needs an enrollment code, or the approval of a registered phone.")
}
