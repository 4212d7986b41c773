import CountersignCore

/// The client input of the biometric steps, `{publicKeyId, signedChallenge, userIdentifier}`.
struct BiometricAnswer {
    let publicKeyID: String
    let signature: String
    let userIdentifier: String

    init(_ input: JSONValue?) throws(ClientResponseNotValid) {
        let fields = try ClientInput(input)
        publicKeyID = try fields.string("publicKeyId")
        signature = try fields.string("signedChallenge")
        userIdentifier = try fields.string("userIdentifier")
    }

    /// The key, with its user, behind a signature of `challenge` that verifies, and the signature; nil for
    /// an unknown user, an unknown or revoked key, a bad signature, or a key on another device than the one
    /// asked. All fail alike, so the answer does not reveal which users exist.
    func verify(
        challenge: String, _ state: InteractionState, _ environment: StepEnvironment
    ) async throws -> (credential: BiometricCredential, signature: VerifiedSignature)? {
        guard let credential = try await environment.effects.activeBiometricKey(externalUserID: userIdentifier, publicKeyID: publicKeyID),
            let verified = credential.key.verifiedSignature(signatureBase64: signature, of: challenge), credential.isUsable(in: state)
        else { return nil }
        return (credential, verified)
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
