import CountersignCore

/// The client input of the biometric steps, `{publicKeyId, signedChallenge, userIdentifier}`; the user's
/// identifier in its canonical form (`ExternalUserID`).
struct BiometricAnswer {
    let publicKeyID: String
    let signature: String
    let userIdentifier: String

    init(_ input: JSONValue?) throws(ClientResponseNotValid) {
        let fields = try ClientInput(input)
        publicKeyID = try fields.string("publicKeyId")
        signature = try fields.string("signedChallenge")
        userIdentifier = ExternalUserID.canonical(try fields.string("userIdentifier"))
        guard ExternalUserID.isAcceptable(userIdentifier) else { throw ClientResponseNotValid("userIdentifier must be 1 to 256 characters, none a control character") }
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
    /// Whether the key may answer in this run: in a mobile approve journey it must be the key of the
    /// approval's user and live on the device that was asked, so the approval is bound to that person
    /// and that device. A key no device holds (one a journey registered without `device_registration`)
    /// answers no approval.
    func isUsable(in state: InteractionState) -> Bool {
        guard state.approvalID != nil else { return true }
        return deviceID != nil && deviceID == state.deviceID && user.userID == state.user?.userID
    }
}
