import CountersignCore

/// `mobile_biometrics_registration`: store the public key the phone keeps behind biometrics.
/// Input `{publicKey, publicKeyId, os, keyType?, attestation?}`; P-256 or RSA-2048+.
struct BiometricsRegistrationStep: StepBehavior {
    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        await environment.enrolling(state) { user in
            .present(
                journeyStepID: JourneyStepID.mobileBiometricsRegistration,
                data: ["user_identifier": .string(user.externalUserID)], secrets: [:])
        }
    }

    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        guard let user = state.user else { return .failure(WireError(code: ErrorCode.userNotFound, message: "No user.")) }
        let fields = try ClientInput(input)
        let key = try fields.publicKey("publicKey", allowRSA: true)
        let publicKeyID = try fields.string("publicKeyId")
        let os = try fields.string("os")
        if let declared = try fields.optionalString("keyType"), declared.lowercased() != key.family.rawValue {
            throw ClientResponseNotValid("field 'keyType' says '\(declared)' but the key is \(key.family.rawValue)")
        }
        let recordID = try await environment.effects.registerBiometricKey(
            BiometricKeyRegistration(userID: user.userID, publicKeyID: publicKeyID, key: key, os: os))
        state.registeredBiometricKeyIDs.append(recordID)
        return .next(output: ["public_key_id": .string(publicKeyID)])
    }
}
