import CountersignClient
import CountersignCore
import Crypto
import Foundation
import Testing

@Suite("Transaction signing on the phone (mobile_biometrics_transaction_signing)")
struct TransactionSigningTests {
    @Test("the phone is shown the payment, signs exactly it, and the token carries it")
    func signsPayment() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let step = try await phone.startSigning(as: "ada@example.com")
            #expect(step.journeyStepID == JourneyStepID.mobileBiometricsTransactionSigning)
            let data = try #require(step.data)
            #expect(data["user_identifier"] == "ada@example.com")
            #expect(data["approval_data"] == .object(examplePayment.mapValues { .string($0) }))
            let nonce = try #require(data["nonce"]?.stringValue)
            #expect(LenientBase64.decode(nonce)?.count == 32)
            #expect(data["biometrics_challenge"]?.stringValue
                == TransactionChallenge.derive(approvalData: try ApprovalData(examplePayment), nonceBase64URL: nonce))

            let done = try await phone.client.submitClientResponse(.clientInput, data: try await phone.signShown(step, as: "ada@example.com"))
            #expect(done.journeyStepID == JourneyStepID.success)
            let claims = try await server.verifiedClaims(try #require(done.token))
            #expect(claims.approvalData == (try ApprovalData(examplePayment)))
            #expect(claims.amr == ["mobile_biometrics"])
            #expect(claims.deviceID?.hasPrefix("dev_") == true)
            #expect(claims.journeyID == "mobile_transaction_signing")
        }
    }

    @Test("a signature over changed details is refused; the step repeats with a fresh nonce")
    func changedDetails() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let step = try await phone.startSigning(as: "ada@example.com")
            var changed = examplePayment
            changed["amount"] = "9000"
            let refused = try await phone.client.submitClientResponse(
                .clientInput, data: try await phone.signOther(changed, for: step, as: "ada@example.com"))
            #expect(refused.error?.code == ErrorCode.invalidCredentials)
            #expect(refused.token == nil)
            #expect(refused.journeyStepID == JourneyStepID.mobileBiometricsTransactionSigning)
            #expect(refused.data?["nonce"] != step.data?["nonce"])
            let evidence = try await server.admin(.GET, "evidence")
            #expect(evidence.body["evidence"] == [])
        }
    }

    @Test("a payment the relying party names by an email in other capitals is signed by that user's key, shown to the phone as registered")
    func emailInOtherCapitals() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let step = try await phone.startSigning(as: "Ada@Example.COM")
            #expect(step.data?["user_identifier"] == "ada@example.com", "the phone finds its key under the id it registered")
            let done = try await phone.client.submitClientResponse(.clientInput, data: try await phone.signShown(step, as: "ada@example.com"))
            #expect(done.journeyStepID == JourneyStepID.success)
            #expect(try await server.verifiedClaims(try #require(done.token)).externalUserID == "ada@example.com")
        }
    }

    @Test("a signature replayed on a second transaction with the same details is refused")
    func replayedSignature() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let first = try await phone.startSigning(as: "ada@example.com")
            let answer = try await phone.signShown(first, as: "ada@example.com")
            #expect(try await phone.client.submitClientResponse(.clientInput, data: answer).journeyStepID == JourneyStepID.success)

            _ = try await phone.startSigning(as: "ada@example.com")
            let replayed = try await phone.client.submitClientResponse(.clientInput, data: answer)
            #expect(replayed.error?.code == ErrorCode.invalidCredentials)
            #expect(replayed.token == nil)
        }
    }

    @Test("the SDK refuses to sign when the challenge does not follow from the details shown")
    func sdkRefusesMismatch() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let step = try await phone.startSigning(as: "ada@example.com")
            let data = try #require(step.data)
            var shown = examplePayment
            shown["recipient"] = "Merchant B"
            await #expect(throws: CountersignClientError.challengeMismatch) {
                _ = try await phone.authenticator.approvalNativeBiometrics(
                    userIdentifier: "ada@example.com", approvalData: shown, nonce: try #require(data["nonce"]?.stringValue),
                    challenge: try #require(data["biometrics_challenge"]?.stringValue))
            }
            await #expect(throws: CountersignClientError.challengeMismatch) {
                _ = try await phone.authenticator.approvalNativeBiometrics(
                    userIdentifier: "ada@example.com", approvalData: examplePayment, nonce: LenientBase64.urlEncoded(SecureRandom.bytes(32)),
                    challenge: try #require(data["biometrics_challenge"]?.stringValue))
            }
        }
    }

    @Test("approval data breaking a rule is refused at start, naming the key and the rule", arguments: [
        ("11 properties", JSONValue.object(Dictionary(uniqueKeysWithValues: (1...11).map { ("k\($0)", JSONValue.string("v")) })), "at most 10"),
        ("a number value", ["amount": 1000], "'amount': value must be a string"),
        ("a nested object", ["payee": ["name": "A"]], "'payee': value must be a string"),
        ("a dollar sign", ["amount": "$1000"], "'amount': value may contain only"),
        ("an angle bracket", ["payee": "<b>A</b>"], "'payee': value may contain only"),
        ("an empty key", ["": "x"], "keys must not be empty"),
        ("a value too long for the phone's screen", ["payee": .string(String(repeating: "A", count: 129))], "'payee': value must be at most 128 characters"),
        ("a key with a symbol", ["pay€e": "A"], "key may contain only"),
        ("a key too long for the phone's screen", [String(repeating: "k", count: 65): "A"], "key must be at most 64 characters, got 65"),
        ("a string instead of an object", "amount=1000", "must be a JSON object"),
        ("an array instead of an object", ["1000"], "must be a JSON object"),
    ] as [(String, JSONValue, String)])
    func approvalDataRules(name: String, approvalData: JSONValue, rule: String) async throws {
        try await TestServer.run { server in
            let response = try await server.send(
                .POST, "/v1/journeys/mobile_transaction_signing/start",
                json: ["client_id": "demo-native", "approval_data": approvalData, "additional_params": ["external_user_id": "a"]])
            #expect(response.status == .badRequest, "\(name)")
            #expect(response.body["error"]?["code"] == .string(ErrorCode.invalidApprovalData), "\(name)")
            let message = response.body["error"]?["message"]?.stringValue ?? ""
            #expect(message.contains(rule), "\(name): \(message)")
        }
    }

    @Test("a signature sent as raw r‖s is kept in the evidence as DER, the form openssl reads")
    func rawSignatureKeptAsDER() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let step = try await phone.startSigning(as: "ada@example.com")
            var answer = try #require(try await phone.signShown(step, as: "ada@example.com").objectValue)
            let der = try #require(answer["signedChallenge"]?.stringValue.flatMap { Data(base64Encoded: $0) })
            let raw = try P256.Signing.ECDSASignature(derRepresentation: der).rawRepresentation
            answer["signedChallenge"] = .string(raw.base64EncodedString())
            #expect(try await phone.client.submitClientResponse(.clientInput, data: .object(answer)).journeyStepID == JourneyStepID.success)

            let listed = try await server.admin(.GET, "evidence").body["evidence"]?.arrayValue ?? []
            let bundle = try await server.evidence(try #require(listed.first?["id"]?.stringValue))
            let kept = try #require(Data(base64Encoded: bundle.signature))
            #expect(try P256.Signing.ECDSASignature(derRepresentation: kept).rawRepresentation == raw)
            try bundle.verify()
        }
    }

    @Test("a journey started without approval data takes its failure branch with invalid_approval_data")
    func nothingToSign() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let rejected = try await phone.startSigning(as: "ada@example.com", approvalData: nil)
            #expect(rejected.journeyStepID == JourneyStepID.rejection)
            #expect(rejected.error?.code == "not_signed")
            #expect(rejected.data?["reason"] == .string(ErrorCode.invalidApprovalData))
        }
    }

    @Test("the output variable holds the signed result, and its evidence verifies offline")
    func outputVariableAndEvidence() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = TestPhone(client: server.client())
            let registered = try await phone.register(email: "ada@example.com")
            let step = try await phone.startSigning("txn_branches", as: "ada@example.com", approvalData: nil, params: ["amount": "25.00"])
            #expect(step.data?["approval_data"] == ["amount": "25.00", "payee": "Merchant A"])
            let answer = try await phone.signShown(step, as: "ada@example.com")
            let echo = try await phone.client.submitClientResponse(.clientInput, data: answer)
            #expect(echo.error?.code == "echo_signed")
            let signed = try #require(echo.data?["signed"])
            #expect(signed["approval_data"] == ["amount": "25.00", "payee": "Merchant A"])
            #expect(signed["nonce"] == step.data?["nonce"])
            #expect(signed["challenge"] == step.data?["biometrics_challenge"])
            #expect(signed["signature"] == answer["signedChallenge"])
            #expect(signed["public_key_id"] == answer["publicKeyId"])
            #expect(signed["signed_at"]?.stringValue.flatMap { ISO8601DateFormatter().date(from: $0) } != nil)

            let bundle = try await server.evidence(try #require(signed["evidence_id"]?.stringValue))
            try bundle.verify()
            #expect(bundle.approvalData == (try ApprovalData(["amount": "25.00", "payee": "Merchant A"])))
            #expect(bundle.externalUserID == "ada@example.com")
            #expect(bundle.deviceID == registered.data?["device_id"]?.stringValue)
            #expect(bundle.publicKeyID == answer["publicKeyId"]?.stringValue)
            #expect(bundle.journeyID == "txn_branches")
            let listed = try await server.admin(.GET, "evidence?user_id=\(bundle.userID)")
            #expect(listed.body["evidence"]?.arrayValue?.count == 1)
            #expect(try await server.admin(.GET, "evidence/evd_unknown").status == .notFound)
            #expect(try await server.send(.GET, "/admin/v1/evidence/\(bundle.id)").status == .unauthorized)
        }
    }

    @Test("failure_branch: wrong signatures up to max_attempts take the failure branch with the error in its variable")
    func failureBranch() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            var step = try await phone.startSigning("txn_branches", as: "ada@example.com", approvalData: nil, params: ["amount": "5"])
            for _ in 0..<2 {
                step = try await phone.client.submitClientResponse(
                    .clientInput, data: try await phone.signOther(["amount": "6", "payee": "Merchant A"], for: step, as: "ada@example.com"))
            }
            #expect(step.journeyStepID == JourneyStepID.rejection)
            #expect(step.error?.code == "echo_failure")
            #expect(step.data?["failure"]?["code"] == .string(ErrorCode.invalidCredentials))
        }
    }

    @Test("abort: a failed signature rejects the journey with the step's own error")
    func failureAborts() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let step = try await phone.startSigning("txn_abort", as: "ada@example.com")
            var changed = examplePayment
            changed["amount"] = "1"
            let rejected = try await phone.client.submitClientResponse(
                .clientInput, data: try await phone.signOther(changed, for: step, as: "ada@example.com"))
            #expect(rejected.journeyStepID == JourneyStepID.rejection)
            #expect(rejected.error?.code == ErrorCode.invalidCredentials)
        }
    }

    @Test("cancel_branch follows the cancel branch; abort rejects the journey as cancelled")
    func cancelBehaviors() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            _ = try await phone.startSigning("txn_branches", as: "ada@example.com", params: ["amount": "5"])
            let branched = try await phone.client.submitClientResponse(.cancel)
            #expect(branched.error?.code == "echo_cancel")

            _ = try await phone.startSigning("txn_abort", as: "ada@example.com")
            let aborted = try await phone.client.submitClientResponse(.cancel)
            #expect(aborted.journeyStepID == JourneyStepID.rejection)
            #expect(aborted.error?.code == ErrorCode.cancelled)
        }
    }

    @Test("a custom branch takes data its schema accepts into the branch output variable, and refuses the rest")
    func customBranch() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let step = try await phone.startSigning("txn_branches", as: "ada@example.com", params: ["amount": "5"])
            #expect(step.clientResponseOptions?["pay_later"]?.type == .custom)
            #expect(step.clientResponseOptions?["pay_later"]?.label == "Pay later")
            for bad in [["days": "soon"], [:], ["days": .number(1.5)]] as [JSONValue] {
                await expectRefusal(400, ErrorCode.clientResponseNotValid) {
                    _ = try await phone.client.submitClientResponse(option: "pay_later", data: bad)
                }
            }
            let branched = try await phone.client.submitClientResponse(option: "pay_later", data: ["days": 3, "note": "ignored"])
            #expect(branched.error?.code == "echo_branch")
            #expect(branched.data?["alternative"] == ["days": 3])
        }
    }

    @Test("external_user_id may come from the user the journey already identified")
    func userFromContext() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let login = try await phone.client.startJourney("txn_after_login", approvalData: examplePayment)
            let signing = try await phone.client.submitClientResponse(
                .clientInput, data: try await phone.biometricAnswer(to: login, as: "ada@example.com"))
            #expect(signing.data?["user_identifier"] == "ada@example.com")
            let done = try await phone.client.submitClientResponse(.clientInput, data: try await phone.signShown(signing, as: "ada@example.com"))
            #expect(done.journeyStepID == JourneyStepID.success)
            #expect(try await server.verifiedClaims(try #require(done.token)).approvalData == (try ApprovalData(examplePayment)))
        }
    }
}
