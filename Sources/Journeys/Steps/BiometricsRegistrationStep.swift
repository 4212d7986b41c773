import CountersignCore

/// `mobile_biometrics_registration`: register the public key the phone keeps behind biometrics.
/// Input `{publicKey, publicKeyId, os, keyType?, attestation?}`; P-256 or RSA-2048+. The key is stored
/// when the journey completes, on the device the run registers (`complete`), never before.
struct BiometricsRegistrationStep: StepBehavior {
    var isPhoneOnly: Bool { true }

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
        let publicKeyID = try fields.name("publicKeyId")
        let os = try fields.string("os")
        if let declared = try fields.optionalString("keyType"), declared.lowercased() != key.family.rawValue {
            throw ClientResponseNotValid("field 'keyType' says '\(declared)' but the key is \(key.family.rawValue)")
        }
        let registration = BiometricKeyRegistration(userID: user.userID, publicKeyID: publicKeyID, key: key, os: os)
        state.biometricKeysToStore = (state.biometricKeysToStore ?? []).filter { $0.publicKeyID != publicKeyID } + [registration]
        return .next(output: ["public_key_id": .string(publicKeyID)])
    }
}
