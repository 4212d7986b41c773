import CountersignClient
import CountersignCore
import Foundation
import Testing

@Suite("A signed-in browser issues the enrollment code for a new phone (web_add_phone)")
struct AddPhoneTests {
    @Test("after signing in with her phone, Ada's browser shows a code, its link and QR code; the new phone enrolls with it once")
    func signedInBrowserIssuesACode() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let form = try await browser.client.startJourney("web_add_phone")
            #expect(form.journeyStepID == "login")
            let waiting = try await browser.client.submitClientResponse(.clientInput, data: ["email": "ada@example.com"])
            #expect(try await server.count("enrollment_codes") == 0)
            try await Self.approveAddingAPhone(on: phone, otp: try #require(waiting.data?["otp"]?.stringValue))

            let shown = try await browser.poll()
            #expect(shown.journeyStepID == JourneyStepID.enrollmentCodeIssued)
            let code = try #require(shown.data?["enrollment_code"]?.stringValue)
            let uri = try #require(shown.data?["enrollment_uri"]?.stringValue)
            #expect(uri == EnrollmentLink(server: TestServer.issuer, clientID: "demo-native", code: code).uri)
            let svg = try #require(shown.data?["enrollment_qr_svg"]?.stringValue)
            #expect(svg.hasPrefix("<svg") && svg.contains("<path d=\"M"))

            // The new phone redeems it through the application's native client.
            let (newPhone, step) = try await SecureEnrollmentTests.redeem(code, on: server, client: "demo-native")
            let done = try await SecureEnrollmentTests.registerKeys(of: newPhone, from: step)
            #expect(done.journeyStepID == JourneyStepID.success)
            #expect(try await SecureEnrollmentTests.devices(of: "ada@example.com", on: server).count == 2)
            let (_, replay) = try await SecureEnrollmentTests.redeem(code, on: server, client: "demo-native")
            #expect(replay.error?.code == ErrorCode.invalidCredentials)

            let finished = try await browser.client.submitClientResponse(.clientInput, data: [:])
            #expect(finished.journeyStepID == JourneyStepID.success && finished.token != nil)
        }
    }

    @Test("a code the browser was shown is withdrawn when the person leaves the step another way: someone who saw it cannot enroll with it", arguments: ["cancel", "failure"])
    func leftCodeIsWithdrawn(option: String) async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.client.startJourney("web_add_phone")
            let waiting = try await browser.client.submitClientResponse(.clientInput, data: ["email": "ada@example.com"])
            try await Self.approveAddingAPhone(on: phone, otp: try #require(waiting.data?["otp"]?.stringValue))
            let code = try #require(try await browser.poll().data?["enrollment_code"]?.stringValue)

            let left = try await browser.client.submitClientResponse(option: option)
            #expect(left.journeyStepID == JourneyStepID.rejection)
            // Whoever looked over her shoulder tries the code on their own phone.
            let (_, step) = try await SecureEnrollmentTests.redeem(code, on: server, client: "demo-native")
            #expect(step.error?.code == ErrorCode.invalidCredentials)
            #expect(try await SecureEnrollmentTests.devices(of: "ada@example.com", on: server).count == 1)
        }
    }

    /// Ada's phone approves adding one: it types the code the browser shows, is shown that this adds a
    /// phone to her account, never a sign-in, and signs exactly that.
    static func approveAddingAPhone(on phone: RegisteredPhone, otp: String) async throws {
        #expect(try await phone.startApproval().journeyStepID == JourneyStepID.otpValidation)
        let typed = try await phone.phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(otp)])
        #expect(typed.journeyStepID == JourneyStepID.mobileBiometricsTransactionSigning, "the phone shows what it approves")
        #expect(typed.data?["approval_data"] == ["action": "Add a new phone to this account"])
        let signed = try await phone.phone.client.submitClientResponse(.clientInput, data: try await phone.phone.signShown(typed, as: phone.email))
        #expect(signed.journeyStepID == JourneyStepID.success)
    }

    @Test("a browser that only typed an existing user's email gets no code for them")
    func namedUserGetsNoCode() async throws {
        try await TestServer.runWithFixtures { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.client.startJourney("named_user_add_phone")
            let refused = try await browser.client.submitClientResponse(.clientInput, data: ["email": "ada@example.com"])
            #expect(refused.journeyStepID == JourneyStepID.rejection)
            #expect(refused.error?.code == ErrorCode.enrollmentRequired)
            #expect(try await server.count("enrollment_codes") == 0)
        }
    }
}
