import CountersignClient
import CountersignCore
import Foundation
import Testing

@Suite("Web-to-mobile transaction signing (web_transaction_signing)")
struct WebTransactionSigningTests {
    static let payment: JSONValue = ["email": "ada@example.com", "amount": "1000", "currency": "USD", "payee": "Merchant A"]
    static let signedDetails = ["amount": "1000", "currency": "USD", "payee": "Merchant A"]

    /// Fills in the payment form and returns the waiting step.
    static func pay(_ browser: TestBrowser, _ form: JSONValue = payment) async throws -> IdoResponse {
        let first = try await browser.client.startJourney("web_transaction_signing")
        #expect(first.journeyStepID == "payment")
        return try await browser.client.submitClientResponse(.clientInput, data: form)
    }

    @Test("the browser's payment is shown and signed on the phone; the browser's token carries it; evidence names the approval")
    func paymentEndToEnd() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let waiting = try await Self.pay(browser)
            #expect(waiting.journeyStepID == JourneyStepID.mobileApproveAuthentication)
            #expect(waiting.data?["approval_data"] == .object(Self.signedDetails.mapValues { .string($0) }))

            let approvalID = try #require(try await phone.inbox().first?["approval_id"])
            let signing = try await phone.startApproval()
            #expect(signing.data?["approval_data"] == waiting.data?["approval_data"])
            let mobileDone = try await phone.phone.client.submitClientResponse(
                .clientInput, data: try await phone.phone.signShown(signing, as: "ada@example.com"))
            #expect(mobileDone.journeyStepID == JourneyStepID.success)

            let done = try await browser.poll()
            #expect(done.journeyStepID == JourneyStepID.success)
            let claims = try await server.verifiedClaims(try #require(done.token))
            #expect(claims.approvalData == (try ApprovalData(Self.signedDetails)))
            #expect(claims.amr == ["mobile_biometrics", "hwk", "mfa"])
            #expect(claims.deviceID == phone.deviceID)
            #expect(try await server.verifiedClaims(try #require(mobileDone.token)).approvalData == claims.approvalData)

            let listed = try await server.admin(.GET, "evidence?approval_id=\(approvalID)")
            let bundle = try #require(listed.body["evidence"]?.arrayValue?.first)
            #expect(bundle["device_id"] == .string(phone.deviceID))
            #expect(bundle["approval_data"] == waiting.data?["approval_data"])
        }
    }

    @Test("an approval with details fails when the phone only authenticates without signing them")
    func detailsNotSigned() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.client.startJourney("web_login_biometric_only", approvalData: ["amount": "5"])
            _ = try await browser.client.submitClientResponse(.clientInput, data: ["email": "ada@example.com"])
            #expect(try await phone.approve().journeyStepID == JourneyStepID.success)
            let rejected = try await browser.poll()
            #expect(rejected.journeyStepID == JourneyStepID.rejection)
            #expect(rejected.data?["reason"] == "approval_data_not_signed")
        }
    }

    @Test("an approval fails when the phone signs details other than the ones the browser showed")
    func otherDetailsSigned() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.client.startJourney(
                "web_payment_other_data", additionalParams: ["email": "ada@example.com"], approvalData: ["amount": "5000", "payee": "Merchant A"])
            let signing = try await phone.startApproval()
            #expect(signing.data?["approval_data"] == ["amount": "1", "payee": "Someone else"])
            let mobileDone = try await phone.phone.client.submitClientResponse(
                .clientInput, data: try await phone.phone.signShown(signing, as: "ada@example.com"))
            #expect(mobileDone.journeyStepID == JourneyStepID.success)
            let rejected = try await browser.poll()
            #expect(rejected.journeyStepID == JourneyStepID.rejection)
            #expect(rejected.data?["reason"] == "approval_data_not_signed")
        }
    }

    @Test("payment details breaking the rules end the journey before anything is pushed")
    func invalidDetails() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            var form = Self.payment.objectValue!
            form["amount"] = "$1000"
            let rejected = try await Self.pay(browser, .object(form))
            #expect(rejected.journeyStepID == JourneyStepID.rejection)
            #expect(rejected.data?["reason"] == .string(ErrorCode.invalidApprovalData))
            #expect(try await phone.inbox().isEmpty)
        }
    }

    @Test("a biometric key of another device of the same user cannot sign for the device that was asked")
    func keyOfAnotherDevice() async throws {
        try await TestServer.run { server in
            let asked = try await RegisteredPhone.register(server, email: "ada@example.com")
            let other = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let choice = try await Self.pay(browser)
            let devices = try #require(choice.data?["devices"]?.arrayValue)
            // Newest first: the first registered phone is the second choice.
            let code = try #require(devices.last?["code"])
            _ = try await browser.client.submitClientResponse(.clientInput, data: ["selected_device_code": code])

            let signing = try await asked.startApproval()
            let answer = try await other.phone.signShown(signing, as: "ada@example.com")
            let refused = try await asked.phone.client.submitClientResponse(.clientInput, data: answer)
            #expect(refused.error?.code == ErrorCode.invalidCredentials)
            let signed = try await asked.phone.client.submitClientResponse(
                .clientInput, data: try await asked.phone.signShown(refused, as: "ada@example.com"))
            #expect(signed.journeyStepID == JourneyStepID.success)
        }
    }
}
