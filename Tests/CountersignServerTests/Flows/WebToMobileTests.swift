import CountersignClient
import CountersignCore
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@Suite("Web-to-mobile approval")
struct WebToMobileTests {
    /// Ada's phone, registered, and a browser's sign-in with `journey` whose request that phone has opened.
    func openedRequest(
        _ server: TestServer, journey: String = "web_login_biometric_only"
    ) async throws -> (phone: RegisteredPhone, browser: TestBrowser, waiting: IdoResponse, opened: IdoResponse) {
        let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
        let browser = TestBrowser(server)
        let waiting = try await browser.signIn(journey, email: "ada@example.com")
        return (phone, browser, waiting, try await phone.startApproval())
    }

    @Test("an email typed in another case reaches the same user's phone")
    func emailCase() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let waiting = try await browser.signIn(email: "ADA@example.COM")
            #expect(waiting.journeyStepID == JourneyStepID.mobileApproveAuthentication)
            #expect(try await phone.inbox().count == 1)
            _ = try await phone.approve()
            let claims = try await server.verifiedClaims(try #require(try await browser.poll().token))
            #expect(claims.externalUserID == "ada@example.com")
        }
    }

    /// A journey may leave its biometric step without `user_identifier`; the approval is still bound to its
    /// person and phone. The attack: Ada's phone (its device key) in the hands of Bob, whose own key a
    /// registration left on no device, approving Ada's sign-in with it.
    @Test("an approval whose biometric step names no user is approved only by its user's key on the phone asked, not by another person's key, held on no device or on that phone")
    func unpinnedApprovalNeedsTheUsersKey() async throws {
        try await TestServer.runWithFixtures { server in
            let ada = try await RegisteredPhone.register(server, email: "ada@example.com")
            let bob = TestPhone(client: server.client())
            _ = try await bob.client.startJourney("biometrics_only_registration")
            let registration = try await bob.client.submitClientResponse(.clientInput, data: ["email": "bob@example.com"])
            let registered = try await bob.client.submitClientResponse(
                .clientInput, data: try await bob.authenticator.registerNativeBiometrics(userIdentifier: "bob@example.com"))
            #expect(registration.journeyStepID == JourneyStepID.mobileBiometricsRegistration && registered.journeyStepID == JourneyStepID.success)
            try await bob.authenticator.keepRegisteredKeys(userIdentifier: "bob@example.com")

            let browser = TestBrowser(server)
            #expect(try await browser.signIn("web_login_unpinned", email: "ada@example.com").journeyStepID == JourneyStepID.mobileApproveAuthentication)
            let step = try await ada.startApproval()
            let withBobsKey = try await ada.phone.client.submitClientResponse(
                .clientInput, data: try await bob.biometricAnswer(to: step, as: "bob@example.com"))
            #expect(withBobsKey.journeyStepID == JourneyStepID.mobileBiometricsAuthentication)
            #expect(withBobsKey.error?.code == ErrorCode.invalidCredentials)
            #expect(try await browser.pollLater(server).token == nil, "the browser is not signed in")

            // Bob's key as if it lived on Ada's phone (written so in the database): on the device asked, and
            // still not hers.
            let sql = server.sql
            try await sql.raw("UPDATE biometric_keys SET device_id = \(bind: ada.deviceID) WHERE device_id IS NULL").run()
            let onHerPhone = try await ada.phone.client.submitClientResponse(
                .clientInput, data: try await bob.biometricAnswer(to: withBobsKey, as: "bob@example.com"))
            #expect(onHerPhone.journeyStepID == JourneyStepID.mobileBiometricsAuthentication)
            #expect(onHerPhone.error?.code == ErrorCode.invalidCredentials)

            let withHers = try await ada.phone.client.submitClientResponse(
                .clientInput, data: try await ada.phone.biometricAnswer(to: onHerPhone, as: "ada@example.com"))
            #expect(withHers.journeyStepID == JourneyStepID.success)
            let claims = try await server.verifiedClaims(try #require(try await browser.pollLater(server).token))
            #expect(claims.externalUserID == "ada@example.com")
        }
    }

    @Test("a mobile approve journey binds no key before the person authenticated in it: the phone's device key alone registers nothing")
    func approveJourneyBindsNoKeyOnTheDeviceKeyAlone() async throws {
        try await TestServer.runWithFixtures { server in
            let ada = try await RegisteredPhone.register(server, email: "ada@example.com")
            let userID = try #require(try await server.admin(.GET, "users?external_user_id=ada@example.com").body.arrayValue?.first?["id"]?.stringValue)
            func keys() async throws -> Int { try await server.admin(.GET, "users/\(userID)/biometric-keys").body.arrayValue?.count ?? 0 }
            #expect(try await keys() == 1)

            let browser = TestBrowser(server)
            _ = try await browser.signIn("web_login_registers_on_phone", email: "ada@example.com")
            var step = try await ada.startApproval()
            if step.journeyStepID == JourneyStepID.mobileBiometricsRegistration {
                // The attack: whoever holds the phone binds a key of their own to Ada's account.
                step = try await ada.phone.client.submitClientResponse(
                    .clientInput, data: try await ada.phone.authenticator.registerNativeBiometrics(userIdentifier: "ada@example.com"))
            }
            #expect(step.journeyStepID == JourneyStepID.rejection)
            #expect(try await keys() == 1, "no key was bound to Ada")
        }
    }

    @Test("biometric approval on the phone signs the browser in")
    func biometricHappyPath() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let waiting = try await browser.signIn(email: "ada@example.com")
            #expect(waiting.journeyStepID == JourneyStepID.mobileApproveAuthentication)
            #expect(waiting.data?["polling_interval"] == 3)
            #expect(waiting.data?["resend_attempts_left"] == 3)
            #expect(waiting.data?["expires_at"]?.stringValue != nil)
            #expect(waiting.data?["otp"] == nil)
            #expect(waiting.clientResponseOptions?["resend"]?.type == .resend)

            let payload = try #require(try await phone.inbox().first)
            #expect(Set(payload.keys) == ["approval_id", "client_id", "expires_at", "application"])
            #expect(payload["client_id"] == "demo-native")
            // The whole address: a random approval id holds "ada" once in some ten thousand runs.
            #expect(!payload.values.contains { $0.contains("ada@example.com") })

            let mobileDone = try await phone.approve()
            #expect(mobileDone.journeyStepID == JourneyStepID.success)
            let done = try await browser.poll()
            #expect(done.journeyStepID == JourneyStepID.success)
            let claims = try await server.verifiedClaims(try #require(done.token))
            #expect(claims.amr == ["mobile_biometrics", "hwk", "mfa"])
            #expect(claims.deviceID == phone.deviceID)
            #expect(claims.aud == "demo-web")
            #expect(claims.externalUserID == "ada@example.com")
            #expect(try await phone.inbox().isEmpty)
        }
    }

    @Test("with the web OTP the phone types the code, and the token says code_otp")
    func otpHappyPath() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let otp = try await browser.codeShown(email: "ada@example.com")
            #expect(otp.count == 6)

            try await phone.approve(otp: otp)
            let claims = try await server.verifiedClaims(try #require(try await browser.poll().token))
            #expect(claims.amr == ["mobile_biometrics", "hwk", "code_otp", "mfa"])
        }
    }

    @Test("a mobile journey that ends with the web code approves in the call that checks the code")
    func codeOnlyApproval() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let otp = try await browser.codeShown("web_login_code_only", email: "ada@example.com")
            #expect(try await phone.startApproval().journeyStepID == JourneyStepID.otpValidation)
            let done = try await phone.phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(otp)])
            #expect(done.journeyStepID == JourneyStepID.success)
            let claims = try await server.verifiedClaims(try #require(try await browser.poll().token))
            #expect(claims.amr.contains("code_otp"))
        }
    }

    @Test("a device revoked after its phone opened the request cannot approve it, though the journey signs nothing after the code")
    func revokedWhileOpen() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let otp = try await browser.codeShown("web_login_code_only", email: "ada@example.com")
            #expect(try await phone.startApproval().journeyStepID == JourneyStepID.otpValidation)
            #expect(try await server.admin(.POST, "devices/\(phone.deviceID)/revoke").status == .ok)
            await expectRefusal(403, ErrorCode.deviceRevoked) {
                _ = try await phone.phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(otp)])
            }
            server.clock.advance(by: 10)  // past the polling interval
            let web = try await browser.poll()
            #expect(web.journeyStepID == JourneyStepID.mobileApproveAuthentication, "still waiting")
            #expect(web.token == nil)
        }
    }

    @Test("three wrong codes fail the approval and the web sign-in")
    func otpWrongThreeTimes() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let otp = try await browser.codeShown(email: "ada@example.com")
            let wrong = otp == "000000" ? "111111" : "000000"
            let step = try await phone.startApproval()
            #expect(step.data?["attempts_left"] == 3)
            var answer = try await phone.phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(wrong)])
            #expect(answer.error?.code == ErrorCode.invalidCredentials)
            #expect(answer.data?["attempts_left"] == 2)
            answer = try await phone.phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(wrong)])
            #expect(answer.data?["attempts_left"] == 1)
            answer = try await phone.phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(wrong)])
            #expect(answer.journeyStepID == JourneyStepID.rejection)

            let web = try await browser.poll()
            #expect(web.journeyStepID == JourneyStepID.rejection)
            #expect(web.data?["reason"] == "otp_attempts_exceeded")
        }
    }

    @Test(
        "web codes typed at once in several of the phone's interactions count one at a time: one is answered, the others refused alike, right code or wrong",
        arguments: [true, false])
    func otpTriesAtOnce(rightCodeFirst: Bool) async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let otp = try await TestBrowser(server).codeShown(email: "ada@example.com")
            let wrong = otp == "000000" ? "111111" : "000000"
            let payload = try #require(try await phone.inbox().first)
            // Six interactions for the one approval, each at the code step; one of them types the right code.
            var clients: [OrchestrationClient] = []
            for _ in 0..<6 {
                let client = server.client()
                let step = try await client.startMobileApproveJourney(payload: payload, deviceID: phone.deviceID, authenticator: phone.phone.authenticator)
                #expect(step.journeyStepID == JourneyStepID.otpValidation)
                clients.append(client)
            }
            // The calls reach the writer in about the order they are made: the right code first, or last.
            let right = rightCodeFirst ? 0 : clients.count - 1
            let answers = try await server.atOnce(writingTo: ["approvals"], clients.enumerated().map { index, client in
                { @Sendable in
                    do {
                        let passcode = index == right ? otp : wrong
                        _ = try await client.submitClientResponse(.clientInput, data: ["passcode": .string(passcode)])
                        return "answered"
                    } catch CountersignClientError.server(let status, let error) {
                        return "\(status) \(error.code) \(error.message)"
                    }
                }
            })
            #expect(answers.filter { $0 == "answered" }.count == 1, "\(answers)")
            let refusal = "409 \(ErrorCode.otpAttemptConflict) Another try of this code was counted at the same time; try again."
            #expect(answers.filter { $0 != "answered" }.allSatisfy { $0 == refusal }, "\(answers)")
        }
    }

    @Test("with two devices the browser lists them and the chosen one gets the request")
    func deviceSelection() async throws {
        try await TestServer.run { server in
            let first = try await RegisteredPhone.register(server, email: "ada@example.com")
            let second = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let choice = try await browser.signIn(email: "ada@example.com")
            let devices = try #require(choice.data?["devices"]?.arrayValue)
            #expect(devices.count == 2)
            #expect(devices.allSatisfy { $0["code"]?.stringValue != nil && $0["name"] == "Test phone" })
            #expect(choice.clientResponseOptions?["resend"] == nil)

            let unknown = try await browser.client.submitClientResponse(.clientInput, data: ["selected_device_code": "nope"])
            #expect(unknown.error?.code == "unknown_device_code")
            #expect(unknown.data?["devices"]?.arrayValue?.count == 2)

            // Devices are listed newest first: the last code is the first phone.
            let code = try #require(devices.last?["code"])
            let waiting = try await browser.client.submitClientResponse(.clientInput, data: ["selected_device_code": code])
            #expect(waiting.data?["polling_interval"] == 3)
            #expect(try await first.inbox().count == 1)
            #expect(try await second.inbox().isEmpty)
        }
    }

    @Test("with show_device_names: false the browser, not signed in yet, learns no device's name")
    func hiddenDeviceNames() async throws {
        try await TestServer.runWithFixtures { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            let chosen = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let choice = try await browser.signIn("web_login_hidden_devices", email: "ada@example.com")
            let devices = try #require(choice.data?["devices"]?.arrayValue)
            #expect(devices.compactMap { $0["name"]?.stringValue } == ["Phone 1", "Phone 2"])
            let code = try #require(devices.first?["code"])
            _ = try await browser.client.submitClientResponse(.clientInput, data: ["selected_device_code": code])
            #expect(try await chosen.inbox().count == 1)
        }
    }

    @Test("the shipped web_login tells a stranger who types a person's email no name of their phones")
    func shippedWebLoginHidesNames() async throws {
        try await TestServer.run { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            let choice = try await TestBrowser(server).signIn("web_login", email: "ada@example.com")
            let devices = try #require(choice.data?["devices"]?.arrayValue)
            #expect(devices.compactMap { $0["name"]?.stringValue } == ["Phone 1", "Phone 2"])
        }
    }

    @Test("resend pushes again until no attempts are left, each no sooner than resend_interval after the last push: a script that resends at once rings the phone no more and spends nothing")
    func resendUntilRefused() async throws {
        try await TestServer.run { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.signIn(email: "ada@example.com")
            let firstPush = try await server.count("push_deliveries")
            /// Resends at once, as a script bombarding the phone would: refused, nothing pushed or spent.
            func resendTooSoon(left: Int, wait: Int) async throws {
                let pushed = try await server.count("push_deliveries")
                let refused = try await browser.client.submitClientResponse(.resend)
                #expect(refused.error?.code == ErrorCode.resendTooSoon)
                #expect(refused.error?.message.contains("wait \(wait) s") == true)
                #expect(refused.journeyStepID == JourneyStepID.mobileApproveAuthentication)
                #expect(refused.data?["resend_attempts_left"] == .number(Double(left)))
                #expect(try await server.count("push_deliveries") == pushed)
            }
            try await resendTooSoon(left: 3, wait: 10)
            server.clock.advance(by: 9)
            try await resendTooSoon(left: 3, wait: 1)
            for left in [2, 1, 0] {
                server.clock.advance(by: 10)
                let resent = try await browser.client.submitClientResponse(.resend)
                #expect(resent.error == nil)
                #expect(resent.data?["resend_attempts_left"] == .number(Double(left)))
                if left > 0 { try await resendTooSoon(left: left, wait: 10) }
            }
            #expect(try await server.count("push_deliveries") == firstPush + 3)
            server.clock.advance(by: 10)
            let refused = try await browser.client.submitClientResponse(.resend)
            #expect(refused.error?.code == "resend_limit_reached")
            #expect(refused.journeyStepID == JourneyStepID.mobileApproveAuthentication)
        }
    }

    @Test("a resend after the phone answered pushes nothing: the ended request is not rung to the phone again, and the next poll tells how it ended")
    func resendAfterAnswer() async throws {
        try await TestServer.run { server in
            let (phone, browser, _, _) = try await openedRequest(server)
            #expect(try await phone.phone.client.submitClientResponse(.cancel).journeyStepID == JourneyStepID.rejection)
            let pushed = try await server.count("push_deliveries")
            server.clock.advance(by: 10)
            let resent = try await browser.client.submitClientResponse(.resend)
            #expect(resent.error == nil)
            #expect(try await server.count("push_deliveries") == pushed)
            server.clock.advance(by: 3)
            #expect(try await browser.poll().data?["reason"] == "mobile_rejected")
        }
    }

    @Test("an approval lifetime a client sends (huge) is clamped to the step's longest, and the server stays up")
    func lifetimeFromTheClient() async throws {
        try await TestServer.runWithFixtures { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.client.startJourney("web_login_lifetime_given", additionalParams: ["lifetime": .number(1e300)])
            let waiting = try await browser.client.submitClientResponse(.clientInput, data: ["email": "ada@example.com"])
            let expiresAt = try #require(waiting.data?["expires_at"]?.stringValue.flatMap { ISO8601DateFormatter().date(from: $0) })
            #expect(abs(expiresAt.timeIntervalSince(server.clock.now()) - 3600) <= 1, "the whole seconds the wire shows")
        }
    }

    @Test("cancel in the browser ends the approval on the phone too")
    func cancelFromBrowser() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.signIn(email: "ada@example.com")
            let payload = try #require(try await phone.inbox().first)
            let cancelled = try await browser.client.submitClientResponse(.cancel)
            #expect(cancelled.journeyStepID == JourneyStepID.rejection)
            #expect(cancelled.data?["reason"] == "cancelled")
            #expect(try await phone.inbox().isEmpty)
            await expectRefusal(410, "approval_closed") {
                _ = try await phone.phone.client.startMobileApproveJourney(
                    payload: payload, deviceID: phone.deviceID, authenticator: phone.phone.authenticator)
            }
        }
    }

    @Test(
        "a browser that leaves the waiting step another way (reporting a failure, taking a branch) ends the approval on the phone too",
        arguments: ["failure", "other_way"])
    func leaveWaitingStep(option: String) async throws {
        try await TestServer.runWithFixtures { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.signIn("web_login_other_way", email: "ada@example.com")
            let payload = try #require(try await phone.inbox().first)
            let left = try await browser.client.submitClientResponse(option: option)
            #expect(left.journeyStepID == JourneyStepID.rejection)
            #expect(try await phone.inbox().isEmpty)
            await expectRefusal(410, "approval_closed") {
                _ = try await phone.phone.client.startMobileApproveJourney(
                    payload: payload, deviceID: phone.deviceID, authenticator: phone.phone.authenticator)
            }
        }
    }

    @Test("a phone answering a request the browser cancelled, or that expired, while it was open is refused with the reason")
    func phoneAnswersTooLate() async throws {
        try await TestServer.run { server in
            let (phone, browser, _, opened) = try await openedRequest(server)
            let cancelled = try await browser.client.submitClientResponse(.cancel)
            let answer = try await phone.phone.biometricAnswer(to: opened, as: phone.email)
            await expectRefusal(410, "approval_closed") {
                _ = try await phone.phone.client.submitClientResponse(.clientInput, data: answer)
            }
            // The browser's outcome stands: cancelled, no token, and the approval was not changed by the phone.
            #expect(cancelled.data?["reason"] == "cancelled" && cancelled.token == nil)
            let sql = server.sql
            let statuses = try await sql.raw("SELECT status FROM approvals").all(decoding: [String: String].self)
            #expect(statuses.map { $0["status"] } == ["cancelled"])

            server.clock.advance(by: 11)  // past the backoff after a request that was not approved
            _ = try await browser.signIn(email: "ada@example.com")
            let openedAgain = try await phone.startApproval()
            server.clock.advance(by: 301)
            await expectRefusal(410, ErrorCode.expired) {
                _ = try await phone.phone.client.submitClientResponse(
                    .clientInput, data: try await phone.phone.biometricAnswer(to: openedAgain, as: phone.email))
            }
            let web = try await browser.poll()
            #expect(web.data?["reason"] == "expired")
            #expect(web.token == nil)
        }
    }

    /// The phone's answer settles the approval with what never changes of it, as its run read it when it
    /// opened the request; whether the approval is still there and open is the close's to find.
    @Test("a phone answering a request removed meanwhile (as the sweep removes it) is refused as expired, and the browser is not signed in")
    func phoneAnswersRemovedRequest() async throws {
        try await TestServer.run { server in
            let (phone, browser, _, opened) = try await openedRequest(server)
            let sql = server.sql
            try await sql.raw("DELETE FROM push_deliveries").run()
            try await sql.raw("DELETE FROM push_jobs").run()
            try await sql.raw("DELETE FROM approvals").run()
            await expectRefusal(410, ErrorCode.expired) {
                _ = try await phone.phone.client.submitClientResponse(
                    .clientInput, data: try await phone.phone.biometricAnswer(to: opened, as: phone.email))
            }
            let web = try await browser.poll()
            #expect(web.data?["reason"] == "expired")
            #expect(web.token == nil)
        }
    }

    @Test("a phone typing the web code of a request the browser cancelled meanwhile is refused with approval_closed")
    func webCodeAfterCancel() async throws {
        try await TestServer.run { server in
            let (phone, browser, waiting, opened) = try await openedRequest(server, journey: "web_login")
            let otp = try #require(waiting.data?["otp"]?.stringValue)
            #expect(opened.journeyStepID == JourneyStepID.otpValidation)
            _ = try await browser.client.submitClientResponse(.cancel)
            await expectRefusal(410, "approval_closed") {
                _ = try await phone.phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(otp)])
            }
        }
    }

    @Test("the right web code typed after its request expired is refused as expired, and the browser is not signed in")
    func webCodeAfterExpiry() async throws {
        try await TestServer.run { server in
            let (phone, browser, waiting, opened) = try await openedRequest(server, journey: "web_login")
            let otp = try #require(waiting.data?["otp"]?.stringValue)
            #expect(opened.journeyStepID == JourneyStepID.otpValidation)
            server.clock.advance(by: 301)
            await expectRefusal(410, ErrorCode.expired) {
                _ = try await phone.phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(otp)])
            }
            let web = try await browser.poll()
            #expect(web.data?["reason"] == "expired")
            #expect(web.token == nil)
        }
    }

    @Test("a browser's cancel after the phone's approval committed is refused with approval_closed: the browser's next poll signs it in, as the phone was told")
    func cancelAfterApproval() async throws {
        try await TestServer.run { server in
            let (phone, browser, _, opened) = try await openedRequest(server)
            let approved = try await phone.phone.client.submitClientResponse(
                .clientInput, data: try await phone.phone.biometricAnswer(to: opened, as: phone.email))
            #expect(approved.journeyStepID == JourneyStepID.success)
            await expectRefusal(410, ErrorCode.approvalClosed) { _ = try await browser.client.submitClientResponse(.cancel) }
            let signedIn = try await browser.poll()
            #expect(signedIn.journeyStepID == JourneyStepID.success)
            #expect(signedIn.token != nil)
            let sql = server.sql
            #expect(try await sql.raw("SELECT status FROM approvals").all(decoding: [String: String].self).map { $0["status"] } == ["approved"])
        }
    }

    @Test("a web code is bound to its request: the code another browser shows, typed on this request, is a wrong code")
    func webCodeOfAnotherRequest() async throws {
        try await TestServer.run { server in
            let ada = try await RegisteredPhone.register(server, email: "ada@example.com")
            _ = try await RegisteredPhone.register(server, email: "bob@example.com")
            let adaCode = try await TestBrowser(server).codeShown(email: "ada@example.com")
            // Bob's browser shows a code of its own (a new request until it differs from Ada's: one in a million is the same).
            var bobCode = adaCode
            while bobCode == adaCode {
                let browser = TestBrowser(server)
                bobCode = try await browser.codeShown(email: "bob@example.com")
                if bobCode == adaCode {
                    _ = try await browser.client.submitClientResponse(.cancel)
                    server.clock.advance(by: 11)
                }
            }
            #expect(try await ada.startApproval().journeyStepID == JourneyStepID.otpValidation)
            let answer = try await ada.phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(bobCode)])
            #expect(answer.error?.code == ErrorCode.invalidCredentials)
            #expect(answer.data?["attempts_left"] == 2)
        }
    }

    @Test("deny on the phone fails the web sign-in with mobile_rejected")
    func denyFromPhone() async throws {
        try await TestServer.run { server in
            let (phone, browser, _, _) = try await openedRequest(server)
            let denied = try await phone.phone.client.submitClientResponse(.cancel)
            #expect(denied.journeyStepID == JourneyStepID.rejection)
            let web = try await browser.poll()
            #expect(web.journeyStepID == JourneyStepID.rejection)
            #expect(web.data?["reason"] == "mobile_rejected")
            #expect(web.token == nil)
        }
    }

    @Test("an approval nobody answers expires, on both sides")
    func expiry() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.signIn(email: "ada@example.com")
            let payload = try #require(try await phone.inbox().first)
            server.clock.advance(by: 301)
            let web = try await browser.poll()
            #expect(web.journeyStepID == JourneyStepID.rejection)
            #expect(web.data?["reason"] == "expired")
            await expectRefusal(410, ErrorCode.expired) {
                _ = try await phone.phone.client.startMobileApproveJourney(
                    payload: payload, deviceID: phone.deviceID, authenticator: phone.phone.authenticator, now: server.clock.now())
            }
        }
    }

    @Test("polling faster than the interval is 429 slow_down with Retry-After; the first poll after approval is answered at once")
    func pollingTooFast() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let (id, token) = try await server.waitingWebLogin(email: "ada@example.com")

            let tooFast = try await server.send(.POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": [:]], bearer: token)
            #expect(tooFast.status == .tooManyRequests)
            #expect(tooFast.body["error"]?["code"] == "slow_down")
            #expect(tooFast.headers.first(name: "Retry-After") == "3")

            server.clock.advance(by: 3)
            let polled = try await server.send(.POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": [:]], bearer: token)
            #expect(polled.status == .ok)
            #expect(polled.body["journey_step_id"] == .string(JourneyStepID.mobileApproveAuthentication))

            try await phone.approve()
            let resumed = try await server.send(
                .POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": [:]],
                bearer: polled.body["interaction_token"]?.stringValue)
            #expect(resumed.status == .ok)
            #expect(resumed.body["journey_step_id"] == .string(JourneyStepID.success))
        }
    }

    @Test("a poll or a resend, taken or refused, whose answer was lost on the way: the browser goes on with the token it holds and resumes with it")
    func pollAnswerLost() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let (id, token) = try await server.waitingWebLogin(email: "ada@example.com")

            // The poll reaches the server and its answer never reaches the browser, which polls again
            // with the token it holds.
            server.clock.advance(by: 3)
            let lost = try await server.submit(id, "client_input", bearer: token)
            #expect(lost.status == .ok)
            #expect(lost.body["interaction_token"]?.stringValue == token, "a poll keeps the token")
            server.clock.advance(by: 3)
            let again = try await server.submit(id, "client_input", bearer: token)
            #expect(again.status == .ok)
            #expect(again.body["journey_step_id"] == .string(JourneyStepID.mobileApproveAuthentication))

            // A resend spends an attempt and keeps the token: when its answer is lost, the browser's next
            // poll, with the token it holds, is answered and tells the attempts left.
            server.clock.advance(by: 4)
            let resent = try await server.submit(id, "resend", bearer: token)
            #expect(resent.status == .ok)
            #expect(resent.body["interaction_token"]?.stringValue == token, "a resend keeps the token")
            server.clock.advance(by: 3)
            let afterResend = try await server.submit(id, "client_input", bearer: token)
            #expect(afterResend.status == .ok)
            #expect(afterResend.body["data"]?["resend_attempts_left"] == 2)

            // A resend refused (too soon) changes nothing and keeps the token too.
            let refused = try await server.submit(id, "resend", bearer: token)
            #expect(refused.status == .badRequest)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.resendTooSoon))
            #expect(refused.body["interaction_token"]?.stringValue == token, "a refused resend keeps the token")
            server.clock.advance(by: 3)

            try await phone.approve()
            let resumed = try await server.submit(id, "client_input", bearer: token)
            #expect(resumed.status == .ok)
            #expect(resumed.body["journey_step_id"] == .string(JourneyStepID.success))
            #expect(resumed.body["interaction_token"] == nil)
            #expect(try await server.submit(id, "client_input", bearer: token).body == resumed.body, "the token that ended the run gets its answer again")
        }
    }

    @Test("the answer that ends the run, lost on the way, is answered again to the token that asked for it until the interaction's expiry; a token an earlier answer replaced, and the run's events stream, are refused")
    func lastAnswerLost() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let (id, token, replaced) = try await server.waitingWebLoginWithStartToken(email: "ada@example.com")
            try await phone.approve()
            server.clock.advance(by: 3)

            // The poll that finds the phone's answer ends the run; its answer is lost, and the browser polls again.
            let ended = try await server.submit(id, "client_input", bearer: token)
            #expect(ended.status == .ok)
            #expect(ended.body["journey_step_id"] == .string(JourneyStepID.success))
            let signed = try #require(ended.body["token"]?.stringValue)
            server.clock.advance(by: 3)
            let again = try await server.submit(id, "client_input", bearer: token)
            #expect(again.status == .ok)
            #expect(again.body == ended.body, "the same answer, with the same signed token")
            _ = try await server.verifiedClaims(signed)

            // Nobody else gets it: not a token an earlier answer replaced, nor another call of the ended run.
            #expect(try await server.submit(id, "client_input", bearer: replaced).status == .gone)
            let events = try await server.send(.GET, "/v1/interactions/\(id)/events", bearer: token)
            #expect(events.status == .gone)

            // Until the interaction would have expired (10 minutes from its start), and no longer.
            server.clock.advance(by: 590)
            #expect(try await server.submit(id, "client_input", bearer: token).body == ended.body)
            server.clock.advance(by: 5)
            #expect(try await server.submit(id, "client_input", bearer: token).status == .gone)
        }
    }

    @Test("polls sent at once with one token when the phone has answered: one ends the run, and each of the others is answered the same or told to slow down, never refused")
    func pollsAtOnceWhenAnswered() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let (id, token) = try await server.waitingWebLogin(email: "ada@example.com")
            try await phone.approve()
            server.clock.advance(by: 3)
            let answers = try await withThrowingTaskGroup(of: (status: HTTPStatus, body: JSONValue, headers: HTTPHeaders).self) { group in
                for _ in 0..<8 { group.addTask { try await server.submit(id, "client_input", bearer: token) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let signedIn = answers.filter { $0.status == .ok }
            #expect(answers.allSatisfy { $0.status == .ok || $0.status == .tooManyRequests }, "\(answers.map(\.status))")
            #expect(!signedIn.isEmpty)
            #expect(signedIn.allSatisfy { $0.body == signedIn[0].body && $0.body["journey_step_id"] == .string(JourneyStepID.success) })
            #expect(try await server.submit(id, "client_input", bearer: token).body == signedIn[0].body)
        }
    }

    @Test("the phone's last answer, lost on the way, is sent again by the SDK with the token it still holds and answered the same: the approval stands and the browser signs in")
    func phoneLastAnswerLost() async throws {
        try await TestServer.run { server in
            let network = LosingTransport(InProcessTransport(app: server.app))
            let client = OrchestrationClient(baseURL: URL(string: "http://in-process")!, clientID: "demo-native", transport: network)
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com", client: client)
            let (id, token) = try await server.waitingWebLogin(email: "ada@example.com")
            let step = try await phone.startApproval()
            let answer = try await phone.phone.biometricAnswer(to: step, as: phone.email)

            network.loseNextAnswer()
            await #expect(throws: URLError.self) { try await client.submitClientResponse(.clientInput, data: answer) }
            let again = try await client.submitClientResponse(.clientInput, data: answer)
            #expect(again.journeyStepID == JourneyStepID.success)
            #expect(again.error == nil)

            server.clock.advance(by: 3)
            let resumed = try await server.submit(id, "client_input", bearer: token)
            #expect(resumed.body["journey_step_id"] == .string(JourneyStepID.success))
            #expect(try await server.verifiedClaims(try #require(resumed.body["token"]?.stringValue)).deviceID == phone.deviceID)
        }
    }

    @Test("polls sent at once with one token (a retry while the lost one is still on its way) are each answered or told to slow down, never refused the token they all hold; so too when each reads the run from the database (another instance saved it last)",
          arguments: [false, true])
    func pollsAtOnce(savedElsewhere: Bool) async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let (id, token) = try await server.waitingWebLogin(email: "ada@example.com")
            server.clock.advance(by: 3)
            if savedElsewhere {
                // A save of another instance's: the run this instance kept is outdated, so each poll reads the row.
                try await server.sql.raw("UPDATE interactions SET version = version + 1 WHERE id = \(bind: id)").run()
            }
            let statuses = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await server.send(.POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": [:]], bearer: token).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .ok }.count >= 1)
            #expect(statuses.allSatisfy { $0 == .ok || $0 == .tooManyRequests }, "\(statuses)")
            try await phone.approve()
            let resumed = try await server.send(.POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": [:]], bearer: token)
            #expect(resumed.body["journey_step_id"] == .string(JourneyStepID.success))
        }
    }

    @Test("with unknown_user: reject, an unknown user and a user with no device fail the same way, at once")
    func noDevices() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            #expect(try await server.admin(.POST, "devices/\(phone.deviceID)/revoke").status == .ok)
            for email in ["ada@example.com", "nobody@example.com"] {
                let rejected = try await TestBrowser(server).signIn("web_login_reject_unknown", email: email)
                #expect(rejected.journeyStepID == JourneyStepID.rejection)
                #expect(rejected.data?["reason"] == "no_registered_devices")
            }
        }
    }

    @Test("a mobile journey that completes without authenticating does not approve, and the phone is told so, with no token")
    func mobileJourneyWithoutAuthentication() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let waiting = try await browser.client.startJourney("web_login_no_auth", additionalParams: ["email": "ada@example.com"])
            #expect(waiting.journeyStepID == JourneyStepID.mobileApproveAuthentication)
            let mobile = try await phone.startApproval()
            #expect(mobile.journeyStepID == JourneyStepID.rejection)
            #expect(mobile.error?.code == ErrorCode.mobileNotAuthenticated)
            #expect(mobile.token == nil)
            let web = try await browser.poll()
            #expect(web.journeyStepID == JourneyStepID.rejection)
            #expect(web.data?["reason"] == "mobile_not_authenticated")
        }
    }

    @Test("the mobile journey reads every parameter of the web request")
    func mobileApproveParameters() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.client.startJourney(
                "web_login_echo", additionalParams: ["email": "ada@example.com"], approvalData: ["amount": "12.50"],
                correlationID: "corr-1")
            let echo = try await phone.startApproval()
            let data = try #require(echo.data)
            #expect(data["approval_data"] == ["amount": "12.50"])
            #expect(data["additional_data"] == ["channel": "tests"])
            #expect(data["correlation_id"] == "corr-1")
            #expect(data["device_id"] == .string(phone.deviceID))
            #expect(data["external_user_id"] == "ada@example.com")
            #expect(data["journey_id"] == "web_login_echo")
            #expect(data["user_id"]?.stringValue?.hasPrefix("usr_") == true)
        }
    }

    @Test("a biometric key of another device of the same user cannot approve for the device that was asked")
    func keyOfAnotherDevice() async throws {
        try await TestServer.run { server in
            let asked = try await RegisteredPhone.register(server, email: "ada@example.com")
            let other = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            let choice = try await browser.signIn(email: "ada@example.com")
            let code = try #require(choice.data?["devices"]?.arrayValue?.last?["code"])
            _ = try await browser.client.submitClientResponse(.clientInput, data: ["selected_device_code": code])

            let step = try await asked.startApproval()
            let refused = try await asked.phone.client.submitClientResponse(
                .clientInput, data: try await other.phone.biometricAnswer(to: step, as: "ada@example.com"))
            #expect(refused.error?.code == ErrorCode.invalidCredentials)
            let approved = try await asked.phone.client.submitClientResponse(
                .clientInput, data: try await asked.phone.biometricAnswer(to: refused, as: "ada@example.com"))
            #expect(approved.journeyStepID == JourneyStepID.success)
        }
    }
}
