import CountersignCore

extension StepEnvironment {
    /// The failure a step takes when it needs a user and the journey has not identified one.
    static let noUser = StepEntry.outcome(.failure(WireError(
        code: ErrorCode.userNotFound, message: "The journey has not identified a user yet.")))
}
