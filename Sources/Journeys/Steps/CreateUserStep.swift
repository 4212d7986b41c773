import CountersignCore

/// `create_user`: find the user by external id or create them. The external id is `external_user_id`,
/// else `username`, else the email (lower-cased).
/// With a `user_exists` branch, an existing user takes that branch instead of continuing.
/// An existing user found here is only named, not proven: registration steps refuse to bind keys to them
/// (outside development-only journeys). A user of another application is neither found nor created: the
/// step fails with `enrollment_required`.
struct CreateUserStep: StepBehavior {
    static let externalUserID = ConfigKey.text("external_user_id")
    static let username = ConfigKey.text("username")
    static let email = ConfigKey.text("email")

    var configuration: StepConfiguration {
        let keys = [Self.externalUserID.rule, Self.username.rule, Self.email.rule]
        return StepConfiguration(keys: keys, oneOf: [keys.map(\.name)])
    }

    static let userExistsBranch = "user_exists"

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        let email = environment[Self.email].map { $0.lowercased() }
        guard let externalUserID = environment[Self.externalUserID] ?? environment[Self.username] ?? email,
            ExternalUserID.isAcceptable(externalUserID)
        else {
            return .outcome(.failure(WireError(code: ErrorCode.userNotFound, message: "No user identifier was available.")))
        }
        if let existing = try await environment.effects.findUser(externalUserID: externalUserID) {
            state.actFor(existing, proven: false)
            if let target = environment.step.branches[Self.userExistsBranch]?.target {
                return .outcome(.branch(to: target, output: ["user_id": .string(existing.userID), "created": false]))
            }
            return .outcome(.next(output: ["user_id": .string(existing.userID), "created": false]))
        }
        guard let created = try await environment.effects.createUser(externalUserID: externalUserID, email: email) else {
            return .outcome(.failure(StepEnvironment.enrollmentRequiredError))
        }
        state.actFor(created)
        return .outcome(.next(output: ["user_id": .string(created.userID), "created": true]))
    }
}
