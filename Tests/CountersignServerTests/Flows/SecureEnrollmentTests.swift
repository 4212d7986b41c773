import CountersignClient
import CountersignCore
import Crypto
import Foundation
import Testing

@Suite("Secure enrollment: a phone joins an account only with an enrollment code")
struct SecureEnrollmentTests {
    /// A production server (no demo application) with the shipped templates and the fixtures, and a
    /// `bank` application with a web client `bank-web` and native clients `bank-app` and `other-app`.
    static func production(_ body: (TestServer) async throws -> Void) async throws {
        let journeys = try TestServer.journeysWithFixtures()
        try await TestServer.run(adjust: { $0.mode = .production; $0.journeysDirectory = journeys }) { server in
            #expect(try await server.admin(.POST, "applications", json: ["id": "bank", "name": "Bank"]).status == .created)
            for (id, kind) in [("bank-web", "web"), ("bank-app", "native"), ("other-app", "native")] {
                let created = try await server.admin(.POST, "applications/bank/clients", json: ["id": .string(id), "name": "C", "kind": .string(kind)])
                #expect(created.status == .created)
            }
            try await body(server)
        }
    }

    static func issueCode(_ server: TestServer, for user: String, client: String? = "bank-app") async throws -> String {
        var body: [String: JSONValue] = ["external_user_id": .string(user)]
        if let client { body["client_id"] = .string(client) } else { body["application_id"] = "bank" }
        let issued = try await server.admin(.POST, "enrollment-codes", json: .object(body))
        #expect(issued.status == .created)
        return try #require(issued.body["code"]?.stringValue)
    }

    /// Starts `mobile_registration` through `client` and answers the code step with `code`.
    static func redeem(_ code: String, on server: TestServer, client: String = "bank-app") async throws -> (TestPhone, IdoResponse) {
        let phone = TestPhone(client: server.client(client))
        let first = try await phone.client.startJourney("mobile_registration")
        #expect(first.journeyStepID == JourneyStepID.enrollmentCode)
        return (phone, try await phone.client.submitClientResponse(.clientInput, data: ["enrollment_code": .string(code)]))
    }

    /// Redeems `code` and registers the phone's biometric key and device; returns the last response.
    @discardableResult
    static func enroll(_ code: String, on server: TestServer) async throws -> IdoResponse {
        let (phone, step) = try await redeem(code, on: server)
        return try await registerKeys(of: phone, from: step)
    }

    /// Answers the biometric registration step `step` and the device step after it; keeps the keys when
    /// the registration succeeds.
    static func registerKeys(of phone: TestPhone, from step: IdoResponse) async throws -> IdoResponse {
        #expect(step.journeyStepID == JourneyStepID.mobileBiometricsRegistration)
        let user = try #require(step.data?["user_identifier"]?.stringValue)
        let device = try await phone.client.submitClientResponse(
            .clientInput, data: try await phone.authenticator.registerNativeBiometrics(userIdentifier: user))
        let challenge = try #require(device.data?["challenge"]?.stringValue)
        let done = try await phone.client.submitClientResponse(.clientInput, data: try await phone.authenticator.registerDevice(
            challenge: challenge, name: "Phone", model: "Simulated", push: await phone.client.pushRegistration))
        if done.journeyStepID == JourneyStepID.success { try await phone.authenticator.keepRegisteredKeys(userIdentifier: user) }
        return done
    }

    static func devices(of externalUserID: String, on server: TestServer) async throws -> [JSONValue] {
        let users = try #require(try await server.admin(.GET, "users").body.arrayValue)
        guard let user = users.first(where: { $0["external_user_id"]?.stringValue == externalUserID }),
            let id = user["id"]?.stringValue
        else { return [] }
        return try #require(try await server.admin(.GET, "users/\(id)/devices").body.arrayValue)
    }

    @Test("a code issued by the admin API enrolls a phone for that user, typed in any case and without dashes")
    func codeEnrolls() async throws {
        try await Self.production { server in
            let code = try await Self.issueCode(server, for: "ada@example.com")
            let typed = code.replacingOccurrences(of: "-", with: "").lowercased()
            let done = try await Self.enroll(typed, on: server)
            #expect(done.journeyStepID == JourneyStepID.success)
            #expect(try await Self.devices(of: "ada@example.com", on: server).count == 1)
        }
    }

    /// Emails compare case-insensitively (DESIGN §6): a sign-in form lower-cases the email typed, so a user
    /// the admin API named with capitals must be found by it, not taken for an unknown email.
    @Test("a user the admin API names by an email with capitals signs in on the web typing it in any case, and the request rings their phone")
    func emailsCompareCaseInsensitively() async throws {
        try await Self.production { server in
            let (phone, step) = try await Self.redeem(try await Self.issueCode(server, for: "Ada@Example.com"), on: server)
            let registered = try await Self.registerKeys(of: phone, from: step)
            #expect(registered.journeyStepID == JourneyStepID.success)
            let ada = RegisteredPhone(
                phone: phone, deviceID: try #require(registered.data?["device_id"]?.stringValue),
                email: try #require(step.data?["user_identifier"]?.stringValue))

            let browser = TestBrowser(client: server.client("bank-web"))
            let waiting = try await browser.signIn("web_login", email: "ADA@example.COM")
            #expect(waiting.journeyStepID == JourneyStepID.mobileApproveAuthentication)
            #expect(try await ada.inbox().count == 1, "the request rang Ada's phone, not a decoy")
            #expect(try await ada.approve(otp: try #require(waiting.data?["otp"]?.stringValue)).journeyStepID == JourneyStepID.success)
            let signedIn = try await browser.poll()
            #expect(try await server.verifiedClaims(try #require(signedIn.token)).externalUserID == "ada@example.com")

            for spelling in ["Ada@Example.com", "ada@EXAMPLE.com"] {
                let found = try await server.admin(.GET, "users?external_user_id=\(spelling)").body.arrayValue
                #expect(found?.count == 1 && found?.first?["external_user_id"] == "ada@example.com", "\(spelling)")
            }
        }
    }

    @Test("an attacker naming an existing user without a code cannot add a phone to their account")
    func namingAUserIsNotEnough() async throws {
        try await Self.production { server in
            #expect(try await Self.enroll(try await Self.issueCode(server, for: "ada@example.com"), on: server).journeyStepID == JourneyStepID.success)

            // The attack: an email-trusting registration (the operator's own, not marked development-only)
            // naming Ada's email from the attacker's phone.
            let attacker = TestPhone(client: server.client("bank-app"))
            _ = try await attacker.client.startJourney("trusting_registration")
            let refused = try await attacker.client.submitClientResponse(.clientInput, data: ["email": "ADA@example.com"])
            #expect(refused.journeyStepID == JourneyStepID.rejection)
            #expect(refused.error?.code == ErrorCode.enrollmentRequired)
            #expect(try await Self.devices(of: "ada@example.com", on: server).count == 1, "no phone was added to Ada's account")

            // The development registration that trusts an email does not exist on a production server.
            await expectRefusal(404, ErrorCode.notFound) {
                _ = try await attacker.client.startJourney("mobile_registration_by_email")
            }
        }
    }

    @Test("a journey that only named an existing user gets no token for them: a sign-up naming Ada's email is refused, a new email is signed up")
    func namingAUserGetsNoToken() async throws {
        try await Self.production { server in
            #expect(try await Self.enroll(try await Self.issueCode(server, for: "ada@example.com"), on: server).journeyStepID == JourneyStepID.success)

            let attacker = TestPhone(client: server.client("bank-web"))
            _ = try await attacker.client.startJourney("trusting_sign_up")
            let refused = try await attacker.client.submitClientResponse(.clientInput, data: ["email": "ada@example.com"])
            #expect(refused.journeyStepID == JourneyStepID.rejection)
            #expect(refused.error?.code == ErrorCode.enrollmentRequired)
            #expect(refused.token == nil)

            let newcomer = TestPhone(client: server.client("bank-web"))
            _ = try await newcomer.client.startJourney("trusting_sign_up")
            let signedUp = try await newcomer.client.submitClientResponse(.clientInput, data: ["email": "bo@example.com"])
            #expect(signedUp.journeyStepID == JourneyStepID.success)
            #expect(try await server.verifiedClaims(try #require(signedUp.token)).externalUserID == "bo@example.com")
        }
    }

    @Test("a registered phone adds a new one by approving it with the code the new phone shows; denied, nothing is added")
    func registeredPhoneApproves() async throws {
        try await Self.production { server in
            let (first, redeemed) = try await Self.redeem(try await Self.issueCode(server, for: "ada@example.com"), on: server)
            let enrolled = try await Self.registerKeys(of: first, from: redeemed)
            let registered = RegisteredPhone(phone: first, deviceID: try #require(enrolled.data?["device_id"]?.stringValue), email: "ada@example.com")

            let added = TestPhone(client: server.client("bank-app"))
            _ = try await added.client.startJourney("mobile_registration_by_phone")
            let waiting = try await added.client.submitClientResponse(.clientInput, data: ["email": "ada@example.com"])
            let code = try #require(waiting.data?["otp"]?.stringValue)
            // Ada's phone does not ask for a sign-in: it shows what she approves and she signs exactly that.
            #expect(try await registered.startApproval().journeyStepID == JourneyStepID.otpValidation)
            let typed = try await registered.phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(code)])
            #expect(typed.journeyStepID == JourneyStepID.mobileBiometricsTransactionSigning)
            #expect(typed.data?["approval_data"] == ["action": "Add a new phone to this account"])
            let signed = try await registered.phone.client.submitClientResponse(
                .clientInput, data: try await registered.phone.signShown(typed, as: "ada@example.com"))
            #expect(signed.journeyStepID == JourneyStepID.success)
            let approved = try await added.client.submitClientResponse(.clientInput, data: [:])
            let addedDone = try await Self.registerKeys(of: added, from: approved)
            #expect(addedDone.journeyStepID == JourneyStepID.success)
            #expect(try await Self.devices(of: "ada@example.com", on: server).count == 2)
            // The new phone's token names it, and says how the registered phone approved adding it.
            let claims = try await server.verifiedClaims(try #require(addedDone.token))
            #expect(claims.deviceID == addedDone.data?["device_id"]?.stringValue)
            #expect(claims.deviceID != registered.deviceID)
            #expect(claims.journeyID == "mobile_registration_by_phone")
            #expect(Set(claims.amr) == ["mobile_biometrics", "hwk", "code_otp", "mfa"])
            #expect(claims.approvalData == (try ApprovalData(["action": "Add a new phone to this account"])))

            // An attacker's phone asking the same: Ada denies, and nothing is added.
            let attacker = TestPhone(client: server.client("bank-app"))
            _ = try await attacker.client.startJourney("mobile_registration_by_phone")
            _ = try await attacker.client.submitClientResponse(.clientInput, data: ["email": "ada@example.com"])
            _ = try await registered.startApproval()
            #expect(try await registered.phone.client.submitClientResponse(.cancel).journeyStepID == JourneyStepID.rejection)
            let refused = try await attacker.client.submitClientResponse(.clientInput, data: [:])
            #expect(refused.journeyStepID == JourneyStepID.rejection)
            #expect(refused.data?["reason"] == .string(ErrorCode.mobileRejected))
            #expect(try await Self.devices(of: "ada@example.com", on: server).count == 2)
        }
    }

    @Test("a wrong code is refused with invalid_credentials and counts as a try; the third ends the registration")
    func wrongCodes() async throws {
        try await Self.production { server in
            _ = try await Self.issueCode(server, for: "ada@example.com")
            let (phone, first) = try await Self.redeem("0000-0000-0000-0000", on: server)
            #expect(first.journeyStepID == JourneyStepID.enrollmentCode)
            #expect(first.error?.code == ErrorCode.invalidCredentials)
            let second = try await phone.client.submitClientResponse(.clientInput, data: ["enrollment_code": "1111-1111-1111-1111"])
            #expect(second.error?.code == ErrorCode.invalidCredentials)
            let third = try await phone.client.submitClientResponse(.clientInput, data: ["enrollment_code": "2222-2222-2222-2222"])
            #expect(third.journeyStepID == JourneyStepID.rejection)
            #expect(try await Self.devices(of: "ada@example.com", on: server).isEmpty)
            #expect(try await server.count("users") == 0)
        }
    }

    @Test("a code works once, only before it expires, and only through the client it was issued for")
    func codeLimits() async throws {
        try await Self.production { server in
            let used = try await Self.issueCode(server, for: "ada@example.com")
            #expect(try await Self.enroll(used, on: server).journeyStepID == JourneyStepID.success)
            #expect(try await Self.redeem(used, on: server).1.error?.code == ErrorCode.invalidCredentials)

            let otherClient = try await Self.issueCode(server, for: "bo@example.com")
            #expect(try await Self.redeem(otherClient, on: server, client: "other-app").1.error?.code == ErrorCode.invalidCredentials)

            let late = try await Self.issueCode(server, for: "bo@example.com")
            server.clock.advance(by: 601)
            #expect(try await Self.redeem(late, on: server).1.error?.code == ErrorCode.invalidCredentials)
            #expect(try await Self.devices(of: "bo@example.com", on: server).isEmpty)
            #expect(try await server.count("users") == 1, "only Ada, whose code worked")

            let anyClient = try await Self.issueCode(server, for: "bo@example.com", client: nil)
            #expect(try await Self.redeem(anyClient, on: server, client: "other-app").1.journeyStepID == JourneyStepID.mobileBiometricsRegistration)
        }
    }

    @Test("a code is redeemed only through its own application's phone app: another application's cannot link the user to itself")
    func codeStaysInItsApplication() async throws {
        try await Self.production { server in
            #expect(try await server.admin(.POST, "applications", json: ["id": "shop", "name": "Shop"]).status == .created)
            #expect(try await server.admin(.POST, "applications/shop/clients", json: ["id": "shop-app", "name": "App", "kind": "native"]).status == .created)
            let code = try await Self.issueCode(server, for: "ada@example.com", client: nil)
            #expect(try await Self.redeem(code, on: server, client: "shop-app").1.error?.code == ErrorCode.invalidCredentials)
            #expect(try await Self.redeem(code, on: server, client: "bank-app").1.journeyStepID == JourneyStepID.mobileBiometricsRegistration)
            let mismatched = try await server.admin(
                .POST, "enrollment-codes", json: ["external_user_id": "ada", "application_id": "shop", "client_id": "bank-app"])
            #expect(mismatched.status == .badRequest)
        }
    }

    @Test("the database keeps only a keyed hash of the code; the link names the server, the client and the code")
    func storedAsKeyedHash() async throws {
        try await Self.production { server in
            let issued = try await server.admin(.POST, "enrollment-codes", json: ["external_user_id": "ada", "client_id": "bank-app"]).body
            let code = try #require(issued["code"]?.stringValue)
            let uri = try #require(issued["enrollment_uri"]?.stringValue)
            // (The test server's public URL is plain http, which a phone's SDK would refuse to follow.)
            #expect(uri == EnrollmentLink(server: TestServer.issuer, clientID: "bank-app", code: code).uri)
            #expect(issued["expires_at"]?.stringValue != nil)

            let sql = server.sql
            let rows = try await sql.raw("SELECT * FROM enrollment_codes").all()
            #expect(rows.count == 1)
            let stored = try rows[0].decode(column: "code_hash", as: String.self)
            let plainDigest = SHA256.hash(data: Data(EnrollmentCode.normalized(code).utf8)).map { String(format: "%02x", $0) }.joined()
            #expect(!stored.contains(EnrollmentCode.normalized(code)) && stored != plainDigest)
        }
    }

    @Test("issuing a code needs the admin key, a native client and a lifetime up to a day")
    func issuingIsChecked() async throws {
        try await Self.production { server in
            let anonymous = try await server.send(.POST, "/admin/v1/enrollment-codes", json: ["external_user_id": "ada"])
            #expect(anonymous.status == .unauthorized)
            for body: JSONValue in [
                ["external_user_id": "ada", "client_id": "bank-web"], ["external_user_id": "ada", "client_id": "nobody"],
                ["external_user_id": "", "client_id": "bank-app"], ["external_user_id": "ada", "client_id": "bank-app", "expires_in": 0],
                ["external_user_id": "ada", "client_id": "bank-app", "expires_in": 90000],
                ["external_user_id": "ada"], ["external_user_id": "ada", "application_id": "nowhere"],
            ] {
                let refused = try await server.admin(.POST, "enrollment-codes", json: body)
                #expect(refused.status == .badRequest, "\(body)")
            }
            let sql = server.sql
            #expect(try await sql.raw("SELECT id FROM enrollment_codes").all().isEmpty)
        }
    }
}
