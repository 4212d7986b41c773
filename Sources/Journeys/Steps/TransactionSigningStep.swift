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
    /// A backend client's request (OpenID CIBA): `{authorization_details, binding_message}`, signed in
    /// place of approval data (`AuthorizationRequestChallenge`).
    static let authorizationRequest = ConfigKey.value("authorization_request")

    var configuration: StepConfiguration {
        StepConfiguration(keys: [Self.externalUserID.rule, ConfigKey.approvalData.rule, Self.authorizationRequest.rule])
    }
    var isPhoneOnly: Bool { true }

    /// What the step keeps between calls, in the interaction's server-side secrets.
    enum Key {
        static let challenge = "challenge"
        static let nonce = "nonce"
        static let approvalData = "approval_data"
        static let user = "user"
        static let authorizationRequest = "authorization_request"
    }

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        guard let externalUserID = environment[Self.externalUserID] else {
            return StepEnvironment.noUser
        }
        if let request = environment[Self.authorizationRequest] { return Self.enter(request, for: externalUserID) }
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

    /// Shows a backend client's request and asks for its signature: the details and the binding message as
    /// the phone shows them, which the SDK hashes again before it asks for biometrics.
    private static func enter(_ request: JSONValue, for externalUserID: String) -> StepEntry {
        guard let details = request["authorization_details"]?.arrayValue, let bindingMessage = request["binding_message"]?.stringValue else {
            return .outcome(.failure(WireError(code: ErrorCode.invalidApprovalData, message: "the request has no authorization details to sign")))
        }
        let signed = AuthorizationRequestChallenge.signedObject(authorizationDetails: details, bindingMessage: bindingMessage)
        let nonceBytes = SecureRandom.bytes(32)
        let nonce = LenientBase64.urlEncoded(nonceBytes)
        let challenge = AuthorizationRequestChallenge.derive(signedObject: signed, nonce: nonceBytes)
        return .present(
            journeyStepID: JourneyStepID.mobileBiometricsTransactionSigning,
            data: [
                "user_identifier": .string(externalUserID), "authorization_details": .array(details),
                "binding_message": .string(bindingMessage), "nonce": .string(nonce), "biometrics_challenge": .string(challenge),
            ],
            secrets: [
                Key.challenge: challenge, Key.nonce: nonce, Key.authorizationRequest: CanonicalJSON.text(signed), Key.user: externalUserID,
            ])
    }

    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        let answer = try BiometricAnswer(input)
        if let request = environment.secrets[Key.authorizationRequest] {
            return try await receiveSignature(of: request, answer, &state, environment)
        }
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

    /// The signature of a backend client's request: kept as evidence; the approval counts only if it
    /// covers exactly the request (`ApprovalLifecycle.settle`).
    private func receiveSignature(
        of request: String, _ answer: BiometricAnswer, _ state: inout InteractionState, _ environment: StepEnvironment
    ) async throws -> StepOutcome {
        guard let challenge = environment.secrets[Key.challenge], let nonce = environment.secrets[Key.nonce],
            let expectedUser = environment.secrets[Key.user], let signedObject = try? StrictJSON.parse(request.utf8)
        else { throw ClientResponseNotValid("no request is waiting to be signed") }
        let refused = StepOutcome.retry(.invalidCredentials("The request's signature does not verify."))
        guard answer.userIdentifier == expectedUser,
            let (credential, signature) = try await answer.verify(challenge: challenge, state, environment)
        else { return refused }
        let signedAt = environment.now
        var evidence = TransactionSignature(
            user: credential.user, deviceID: credential.deviceID ?? state.deviceID, publicKeyID: answer.publicKeyID,
            publicKey: credential.key, approvalData: try ApprovalData([:]), nonce: nonce, challenge: challenge,
            signature: signature.canonicalBase64, signedAt: signedAt, journeyID: state.journeyID, approvalID: state.approvalID)
        evidence.authorizationRequest = signedObject
        let evidenceID = try await environment.effects.recordTransactionSignature(evidence)
        state.actFor(credential.user)
        state.deviceID = state.deviceID ?? credential.deviceID
        state.signedAuthorizationRequest = request
        state.addAuthenticationMethod(BiometricsAuthenticationStep.method, at: signedAt)
        return .next(output: [
            "authorization_request": signedObject, "nonce": .string(nonce), "challenge": .string(challenge),
            "signature": .string(answer.signature), "public_key_id": .string(answer.publicKeyID),
            "signed_at": .string(signedAt.formatted(.iso8601)), "evidence_id": .string(evidenceID),
        ])
    }
}
