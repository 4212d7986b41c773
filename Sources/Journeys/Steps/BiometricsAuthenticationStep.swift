import CountersignCore

/// `mobile_biometrics_authentication`: the phone signs a fresh challenge with a registered biometric key.
///
/// With `user_identifier` configured, the answer must be for that user; without it, the answer's
/// `userIdentifier` names the user. Unknown users, unknown or revoked keys and bad signatures all fail
/// alike, so the step does not reveal which users exist.
struct BiometricsAuthenticationStep: StepBehavior {
    static let method = "mobile_biometrics"

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        let challenge = SecureRandom.challenge()
        let identifier: JSONValue = environment.string("user_identifier").map { .string($0) } ?? .null
        return .present(
            journeyStepID: JourneyStepID.mobileBiometricsAuthentication,
            data: ["user_identifier": identifier, "biometrics_challenge": .string(challenge)],
            secrets: ["challenge": challenge])
    }

    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        let fields = try ClientInput(input)
        let publicKeyID = try fields.string("publicKeyId")
        let signature = try fields.string("signedChallenge")
        let identifier = try fields.string("userIdentifier")
        guard let challenge = environment.secrets["challenge"] else { throw ClientResponseNotValid("no challenge is pending") }
        let refused = StepOutcome.retry(.invalidCredentials("The biometric signature does not verify."))
        if let expected = environment.string("user_identifier"), expected != identifier { return refused }
        guard let user = try await environment.effects.findUser(externalUserID: identifier),
            let credential = try await environment.effects.activeBiometricKey(userID: user.userID, publicKeyID: publicKeyID),
            credential.key.verifies(signatureBase64: signature, of: challenge), credential.isUsable(in: state)
        else { return refused }
        state.user = user
        state.addAuthenticationMethod(Self.method, at: environment.now)
        return .next(output: ["user_id": .string(user.userID), "public_key_id": .string(publicKeyID)])
    }
}

extension BiometricCredential {
    /// Whether the key may answer in this run: in a mobile approve journey it must live on the device
    /// that was asked, so the approval is bound to that device.
    func isUsable(in state: InteractionState) -> Bool {
        guard state.approvalID != nil, let askedDevice = state.deviceID, let keyDevice = deviceID else { return true }
        return keyDevice == askedDevice
    }
}
