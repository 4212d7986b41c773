import CountersignClient
import CountersignCore
import Crypto
import Foundation
import Testing

/// The payment of the transaction signing example: what the app sends and the person signs.
let examplePayment = ["amount": "1000", "currency": "USD", "recipient": "Merchant A", "transaction_id": "txn_12345"]

extension TestPhone {
    /// Starts a transaction signing journey on the phone, as a banking app would for a payment.
    func startSigning(
        _ journey: String = "mobile_transaction_signing", as email: String, approvalData: [String: String]? = examplePayment,
        params: [String: JSONValue] = [:]
    ) async throws -> IdoResponse {
        try await client.startJourney(
            journey, additionalParams: params.merging(["external_user_id": .string(email)]) { first, _ in first },
            approvalData: approvalData)
    }

    /// Signs the transaction a signing step shows, through the SDK's checked path.
    func signShown(_ step: IdoResponse, as email: String) async throws -> JSONValue {
        #expect(step.journeyStepID == JourneyStepID.mobileBiometricsTransactionSigning)
        let data = try #require(step.data)
        let shown = try #require(data["approval_data"]?.objectValue).compactMapValues(\.stringValue)
        return try await authenticator.approvalNativeBiometrics(
            userIdentifier: email, approvalData: shown, nonce: try #require(data["nonce"]?.stringValue),
            challenge: try #require(data["biometrics_challenge"]?.stringValue))
    }

    /// Signs a challenge derived from `approvalData` instead of what the step shows, as a tampered app
    /// would.
    func signOther(_ approvalData: [String: String], for step: IdoResponse, as email: String) async throws -> JSONValue {
        let nonce = try #require(step.data?["nonce"]?.stringValue)
        let challenge = try #require(TransactionChallenge.derive(approvalData: try ApprovalData(approvalData), nonceBase64URL: nonce))
        // The SDK signs no challenge it has not checked; a tampered app reaches the key itself.
        let key = try #require(try await SoftwareKeyStore(url: keysURL).key(alias: "countersign.biometric." + email))
        return [
            "publicKeyId": .string(LenientBase64.urlEncoded(SHA256.hash(data: key.publicKeyDER).prefix(16))),
            "signedChallenge": .string(try await key.sign(Data(challenge.utf8)).base64EncodedString()),
            "userIdentifier": .string(email),
        ]
    }
}

extension TestServer {
    /// The evidence bundle with `id`, from the admin API.
    func evidence(_ id: String) async throws -> EvidenceBundle {
        let (status, body) = try await admin(.GET, "evidence/\(id)")
        #expect(status == .ok)
        return try JSONDecoder().decode(EvidenceBundle.self, from: JSONEncoder().encode(body))
    }
}
