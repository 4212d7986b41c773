import CountersignCore

extension StepEnvironment {
    /// The failure a step takes when it needs a user and the journey has not identified one.
    static let noUser = StepEntry.outcome(.failure(WireError(
        code: ErrorCode.userNotFound, message: "The journey has not identified a user yet.")))

    /// The user a registration step may bind keys to: one this run created or proved (an enrollment code,
    /// a sign-in). A user the client only named is refused, except in a development-only journey, which
    /// trusts what it is told.
    func userToEnroll(_ state: InteractionState) -> Result<UserContext, WireError> {
        guard let user = state.user else {
            return .failure(WireError(code: ErrorCode.userNotFound, message: "The journey has not identified a user yet."))
        }
        if state.userOnlyNamed == true, !journeyIsDevelopmentOnly {
            return .failure(WireError(
                code: ErrorCode.enrollmentRequired,
                message: "This user already exists: a new phone needs an enrollment code, or the approval of a registered phone."))
        }
        return .success(user)
    }
}
