import CountersignCore
import Foundation

/// `mobile_biometrics_transaction_signing`: the phone shows transaction details and the person signs,
/// with a biometric key, a challenge derived from exactly those details and fresh randomness
/// (DESIGN.md §3, F13–F16).
///
/// Config: `external_user_id` (expression, required), `approval_data` (an object whose values may be
/// expressions, or one expression giving an object; default: the start call's `approval_data`),
/// `max_attempts`, and the output and behaviour keys every step understands. A verified signature is
/// kept as evidence, and the run's tokens carry the signed approval data.
struct TransactionSigningStep: StepBehavior {
    static let externalUserID = ConfigKey.userIdentifier("external_user_id", required: true)

    var configuration: StepConfiguration {
        StepConfiguration(keys: [Self.externalUserID.rule, ConfigKey.approvalData.rule])
    }
    var isPhoneOnly: Bool { true }

    /// What the step keeps between calls, in the interaction's server-side secrets.
    enum Key {
        static let challenge = "challenge"
        static let nonce = "nonce"
        static let approvalData = "approval_data"
        static let user = "user"
    }

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        guard let externalUserID = environment[Self.externalUserID] else {
            return StepEnvironment.noUser
        }
        let approvalData: ApprovalData
        switch environment.approvalData(state) {
        case .success(let data?): approvalData = data
        case .success(nil):
            return .outcome(.failure(WireError(
                code: ErrorCode.invalidApprovalData, message: "the journey has no approval_data to sign")))
        case .failure(let error): return .outcome(.failure(error))
        }
        let nonceBytes = SecureRandom.bytes(32)
        let nonce = LenientBase64.urlEncoded(nonceBytes)
        let challenge = TransactionChallenge.derive(approvalData: approvalData, nonce: nonceBytes)
        return .present(
            journeyStepID: JourneyStepID.mobileBiometricsTransactionSigning,
            data: [
                "user_identifier": .string(externalUserID), "approval_data": approvalData.json,
                "nonce": .string(nonce), "biometrics_challenge": .string(challenge),
            ],
            secrets: [
                Key.challenge: challenge, Key.nonce: nonce, Key.approvalData: approvalData.canonicalJSON,
                Key.user: externalUserID,
            ])
    }

    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        let answer = try BiometricAnswer(input)
        guard let challenge = environment.secrets[Key.challenge], let nonce = environment.secrets[Key.nonce],
            let expectedUser = environment.secrets[Key.user],
            let approvalData = environment.secrets[Key.approvalData].flatMap({ try? ApprovalData(jsonText: $0) })
        else { throw ClientResponseNotValid("no transaction is waiting to be signed") }
        let refused = StepOutcome.retry(.invalidCredentials("The transaction signature does not verify."))
        guard answer.userIdentifier == expectedUser,
            let (credential, signature) = try await answer.verify(challenge: challenge, state, environment)
        else { return refused }
        let user = credential.user
        let signedAt = environment.now
        let evidenceID = try await environment.effects.recordTransactionSignature(TransactionSignature(
            user: user, deviceID: credential.deviceID ?? state.deviceID, publicKeyID: answer.publicKeyID, publicKey: credential.key,
            approvalData: approvalData, nonce: nonce, challenge: challenge, signature: signature.canonicalBase64, signedAt: signedAt,
            journeyID: state.journeyID, approvalID: state.approvalID))
        state.actFor(user)
        state.deviceID = state.deviceID ?? credential.deviceID
        state.signedApprovalData = approvalData
        state.addAuthenticationMethod(BiometricsAuthenticationStep.method, at: signedAt)
        return .next(output: [
            "approval_data": approvalData.json, "nonce": .string(nonce), "challenge": .string(challenge),
            "signature": .string(answer.signature), "public_key_id": .string(answer.publicKeyID),
            "signed_at": .string(signedAt.formatted(.iso8601)), "evidence_id": .string(evidenceID),
        ])
    }
}
