import CountersignClient
import CountersignCore
import Foundation
import Testing

@Suite("Biometric login on the phone (mobile_login)")
struct MobileLoginTests {
    @Test("the SDK signs the challenge and gets a token that verifies against the JWKS")
    func logsIn() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            let registration = try await phone.register(email: "ada@example.com")
            let userID = try await server.verifiedClaims(try #require(registration.token)).sub

            let done = try await phone.login(as: "ada@example.com")
            #expect(done.journeyStepID == JourneyStepID.success)
            #expect(done.interactionToken == nil)
            let claims = try await server.verifiedClaims(try #require(done.token))
            #expect(claims.iss == TestServer.issuer)
            #expect(claims.aud == "demo-native")
            #expect(claims.sub == userID)
            #expect(claims.amr == ["mobile_biometrics"])
            #expect(claims.journeyID == "mobile_login")
            #expect(claims.exp == claims.iat + 3600)
            #expect(claims.authTime != nil)
        }
    }

    @Test("a signature over something else is refused; the step repeats with a fresh challenge and token")
    func wrongSignature() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let step = try await phone.startLogin()
            let answer = try await phone.authenticator.authenticateNativeBiometrics(
                userIdentifier: "ada@example.com", challenge: AuthenticationChallenge.make())
            let repeated = try await phone.client.submitClientResponse(.clientInput, data: answer)
            #expect(repeated.error?.code == ErrorCode.invalidCredentials)
            #expect(repeated.journeyStepID == JourneyStepID.mobileBiometricsAuthentication)
            #expect(repeated.data?["biometrics_challenge"] != step.data?["biometrics_challenge"])
            #expect(repeated.interactionToken != step.interactionToken)
            #expect(repeated.token == nil)
            // The fresh challenge can still be answered.
            let done = try await phone.client.submitClientResponse(
                .clientInput, data: try await phone.biometricAnswer(to: repeated, as: "ada@example.com"))
            #expect(done.journeyStepID == JourneyStepID.success)
        }
    }

    @Test("a signature by another user's key does not log in as this user")
    func anotherUsersKey() async throws {
        try await TestServer.run { server in
            let ada = TestPhone(client: server.client())
            try await ada.register(email: "ada@example.com")
            let eve = TestPhone(client: server.client())
            try await eve.register(email: "eve@example.com")

            let step = try await eve.startLogin()
            var answer = try #require(try await eve.biometricAnswer(to: step, as: "eve@example.com").objectValue)
            answer["userIdentifier"] = "ada@example.com"
            let refused = try await eve.client.submitClientResponse(.clientInput, data: .object(answer))
            #expect(refused.error?.code == ErrorCode.invalidCredentials)
            #expect(refused.token == nil)
        }
    }

    @Test("a signed challenge replayed in a new interaction is refused")
    func replayedChallenge() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let first = try await phone.startLogin()
            let answer = try await phone.biometricAnswer(to: first, as: "ada@example.com")
            #expect(try await phone.client.submitClientResponse(.clientInput, data: answer).journeyStepID == JourneyStepID.success)

            _ = try await phone.startLogin()
            let replayed = try await phone.client.submitClientResponse(.clientInput, data: answer)
            #expect(replayed.error?.code == ErrorCode.invalidCredentials)
            #expect(replayed.token == nil)
        }
    }

    @Test("a challenge is bound to its interaction: signed for one still open, it is refused in another")
    func challengeOfAnotherInteraction() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let samePhone = TestPhone(client: server.client(), keysURL: phone.keysURL)
            let first = try await phone.startLogin()
            _ = try await samePhone.startLogin()
            let answerToFirst = try await phone.biometricAnswer(to: first, as: "ada@example.com")
            let refused = try await samePhone.client.submitClientResponse(.clientInput, data: answerToFirst)
            #expect(refused.error?.code == ErrorCode.invalidCredentials)
            #expect(refused.token == nil)
            // Where it was made, it still signs in.
            #expect(try await phone.client.submitClientResponse(.clientInput, data: answerToFirst).journeyStepID == JourneyStepID.success)
        }
    }

    @Test("a challenge expires with its interaction: rightly signed after that, it is 410 expired and signs nobody in")
    func challengeAfterExpiry() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let step = try await phone.startLogin()
            let answer = try await phone.biometricAnswer(to: step, as: "ada@example.com")
            server.clock.advance(by: 601)
            await expectRefusal(410, ErrorCode.expired) {
                _ = try await phone.client.submitClientResponse(.clientInput, data: answer)
            }
        }
    }

    @Test("an unknown publicKeyId is refused")
    func unknownKeyID() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let step = try await phone.startLogin()
            var answer = try #require(try await phone.biometricAnswer(to: step, as: "ada@example.com").objectValue)
            answer["publicKeyId"] = "no-such-key"
            let refused = try await phone.client.submitClientResponse(.clientInput, data: .object(answer))
            #expect(refused.error?.code == ErrorCode.invalidCredentials)
        }
    }

    @Test("a revoked biometric key can no longer log in")
    func revokedKey() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            let registration = try await phone.register(email: "ada@example.com")
            let userID = try await server.verifiedClaims(try #require(registration.token)).sub
            let keyID = try #require(try await server.admin(.GET, "users/\(userID)/biometric-keys").body.arrayValue?.first?["id"]?.stringValue)
            let revoked = try await server.admin(.POST, "biometric-keys/\(keyID)/revoke")
            #expect(revoked.body["status"] == "revoked")

            let refused = try await phone.login(as: "ada@example.com")
            #expect(refused.error?.code == ErrorCode.invalidCredentials)
            #expect(refused.token == nil)
        }
    }

    @Test("the keys of a revoked device can no longer log in, and the admin API shows them revoked with it")
    func revokedDevice() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            let registration = try await phone.register(email: "ada@example.com")
            let deviceID = try #require(registration.data?["device_id"]?.stringValue)
            #expect(try await server.admin(.POST, "devices/\(deviceID)/revoke").body["status"] == "revoked")
            let userID = try await server.verifiedClaims(try #require(registration.token)).sub
            let keys = try #require(try await server.admin(.GET, "users/\(userID)/biometric-keys").body.arrayValue)
            #expect(!keys.isEmpty)
            #expect(keys.allSatisfy { $0["status"] == "revoked" && $0["revoked_at"] != nil }, "\(keys)")

            let refused = try await phone.login(as: "ada@example.com")
            #expect(refused.error?.code == ErrorCode.invalidCredentials)
        }
    }

    /// A phone registered for ada@example.com that has started `journey`, and an answer to its biometric
    /// step signed over another challenge.
    static func signingWrong(in journey: String, on server: TestServer) async throws -> (phone: TestPhone, wrong: JSONValue) {
        let phone = TestPhone(client: server.client())
        try await phone.register(email: "ada@example.com")
        _ = try await phone.client.startJourney(journey)
        let wrong = try await phone.authenticator.authenticateNativeBiometrics(userIdentifier: "ada@example.com", challenge: AuthenticationChallenge.make())
        return (phone, wrong)
    }

    @Test("max_attempts no whole number holds (.inf) is taken as the most tries allowed: a wrong signature is refused, and the server stays up")
    func unboundedTries() async throws {
        try await TestServer.runWithFixtures { server in
            let (phone, wrong) = try await Self.signingWrong(in: "mobile_login_tries_given", on: server)
            let refused = try await phone.client.submitClientResponse(.clientInput, data: wrong)
            #expect(refused.error?.code == ErrorCode.invalidCredentials)
            #expect(refused.journeyStepID == JourneyStepID.mobileBiometricsAuthentication)
            #expect(try await server.send(.GET, "/healthz").status == .ok)
        }
    }

    @Test("a step's tries count over the whole run: a branch or its failure edge back to it gives none again, and once they are used up the run is rejected")
    func triesCountOverTheRun() async throws {
        try await TestServer.runWithFixtures { server in
            let (phone, wrong) = try await Self.signingWrong(in: "mobile_login_tries_again", on: server)
            #expect(try await phone.client.submitClientResponse(.clientInput, data: wrong).error?.code == ErrorCode.invalidCredentials)
            // Back to the step through its branch: one of its two tries is left, not two.
            #expect(try await phone.client.submitClientResponse(option: "again").journeyStepID == JourneyStepID.mobileBiometricsAuthentication)
            // The last try used, the failure edge leads back to the step, which is not entered again.
            let last = try await phone.client.submitClientResponse(.clientInput, data: wrong)
            #expect(last.journeyStepID == JourneyStepID.rejection)
            #expect(last.error?.code == ErrorCode.invalidCredentials)
            #expect(last.token == nil)
        }
    }

    @Test("three wrong signatures end the journey in its failure branch")
    func attemptsRunOut() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            _ = try await phone.startLogin()
            let wrong = try await phone.authenticator.authenticateNativeBiometrics(userIdentifier: "ada@example.com", challenge: AuthenticationChallenge.make())
            #expect(try await phone.client.submitClientResponse(.clientInput, data: wrong).error?.code == ErrorCode.invalidCredentials)
            #expect(try await phone.client.submitClientResponse(.clientInput, data: wrong).error?.code == ErrorCode.invalidCredentials)
            let last = try await phone.client.submitClientResponse(.clientInput, data: wrong)
            #expect(last.journeyStepID == JourneyStepID.rejection)
            #expect(last.error?.code == "authentication_failed")
            #expect(last.token == nil)
        }
    }

    @Test("cancel rejects the journey")
    func cancel() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            _ = try await phone.startLogin()
            let cancelled = try await phone.client.submitClientResponse(.cancel)
            #expect(cancelled.journeyStepID == JourneyStepID.rejection)
            #expect(cancelled.error?.code == ErrorCode.cancelled)
        }
    }
}
