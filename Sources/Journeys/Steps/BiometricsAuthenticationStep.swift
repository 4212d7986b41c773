import CountersignCore

/// `mobile_biometrics_authentication`: the phone signs a fresh challenge with a registered biometric key.
///
/// With `user_identifier` configured, the answer must be for that user; without it, the answer's
/// `userIdentifier` names the user.
struct BiometricsAuthenticationStep: StepBehavior {
    /// Read as text, not as a user identifier: one that could name no user must stay (below).
    static let userIdentifier = ConfigKey.text("user_identifier")

    var configuration: StepConfiguration { StepConfiguration(keys: [Self.userIdentifier.rule]) }
    var isPhoneOnly: Bool { true }

    static let method = "mobile_biometrics"

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        let challenge = AuthenticationChallenge.make()
        let identifier: JSONValue = Self.expectedUser(environment).map { .string($0) } ?? .null
        return .present(
            journeyStepID: JourneyStepID.mobileBiometricsAuthentication,
            data: ["user_identifier": identifier, "biometrics_challenge": .string(challenge)],
            secrets: ["challenge": challenge])
    }

    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        let answer = try BiometricAnswer(input)
        guard let challenge = environment.secrets["challenge"] else { throw ClientResponseNotValid("no challenge is pending") }
        let refused = StepOutcome.retry(.invalidCredentials("The biometric signature does not verify."))
        if let expected = Self.expectedUser(environment), expected != answer.userIdentifier { return refused }
        guard let user = try await answer.verify(challenge: challenge, state, environment)?.credential.user else { return refused }
        state.actFor(user)
        state.addAuthenticationMethod(Self.method, at: environment.now)
        return .next(output: ["user_id": .string(user.userID), "public_key_id": .string(answer.publicKeyID)])
    }

    /// The configured `user_identifier`, in its canonical form. One that could name no user stays, so
    /// that no answer matches it: read as absent, it would let any user's key sign in.
    private static func expectedUser(_ environment: StepEnvironment) -> String? {
        environment[userIdentifier].map(ExternalUserID.canonical)
    }
}

