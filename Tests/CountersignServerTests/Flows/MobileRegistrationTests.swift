import CountersignClient
import CountersignCore
import Foundation
import Testing

@Suite("Phone registration (mobile_registration_by_email, development)")
struct MobileRegistrationTests {
    @Test("registers user, biometric key and device; the token names the device")
    func registersPhone() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            let done = try await phone.register(email: "Ada@Example.com")
            #expect(done.journeyStepID == JourneyStepID.success)
            let deviceID = try #require(done.data?["device_id"]?.stringValue)
            let claims = try await server.verifiedClaims(try #require(done.token))
            #expect(claims.deviceID == deviceID)
            #expect(claims.externalUserID == "ada@example.com")
            #expect(claims.aud == "demo-native")

            let user = try await server.admin(.GET, "users/\(claims.sub)").body
            #expect(user["external_user_id"] == "ada@example.com")
            #expect(user["devices"]?.arrayValue?.first?["id"]?.stringValue == deviceID)
            #expect(user["devices"]?.arrayValue?.first?["push_channel"] == "inbox")
            let key = try #require(user["biometric_keys"]?.arrayValue?.first)
            #expect(key["device_id"]?.stringValue == deviceID)
            #expect(key["status"] == "active")
        }
    }

    @Test(
        "a registration that fails or is left after its biometric key leaves no key: it cannot sign in, and no key is listed",
        arguments: [false, true])
    func unfinishedRegistrationLeavesNoKey(reportsFailure: Bool) async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            _ = try await phone.registerUntilDeviceStep(email: "ivy@example.com")
            if reportsFailure {
                let failed = try await phone.client.submitClientResponse(.failure)
                #expect(failed.journeyStepID == JourneyStepID.rejection)
            }

            // Whoever held the registration signs in with the key its first step sent (kept here by hand:
            // the SDK would not use a key of a registration that did not succeed).
            try await phone.authenticator.keepRegisteredKeys(userIdentifier: "ivy@example.com")
            let login = try await phone.login(as: "ivy@example.com")
            #expect(login.error?.code == ErrorCode.invalidCredentials)
            #expect(login.token == nil)
            let userID = try #require(try await server.admin(.GET, "users").body.arrayValue?.first?["id"]?.stringValue)
            #expect(try await server.admin(.GET, "users/\(userID)/biometric-keys").body.arrayValue?.isEmpty == true)
        }
    }

    @Test("registering the same email again finds the existing user")
    func findsExistingUser() async throws {
        try await TestServer.run { server in
            let first = try await TestPhone(client: server.client()).register(email: "bo@example.com")
            let second = try await TestPhone(client: server.client()).register(email: "bo@example.com")
            let firstClaims = try await server.verifiedClaims(try #require(first.token))
            let secondClaims = try await server.verifiedClaims(try #require(second.token))
            #expect(firstClaims.sub == secondClaims.sub)
            #expect(try await server.admin(.GET, "users").body.arrayValue?.count == 1)
        }
    }

    @Test("the software key store keeps keys in a file only its owner can read")
    func keyFileIsPrivate() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "cy@example.com")
            let attributes = try FileManager.default.attributesOfItem(atPath: phone.keysURL.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        }
    }

    @Test("a device signature that does not verify is refused and the step repeats with a new challenge")
    func badDeviceSignature() async throws {
        try await TestServer.run { server in
            let client = server.client()
            let phone = TestPhone(client: client)
            let step = try await phone.registerUntilDeviceStep(email: "di@example.com")
            let challenge = try #require(step.data?["challenge"]?.stringValue)
            let answer = try await phone.authenticator.registerDevice(
                challenge: "not-the-challenge", name: "P", model: "M", push: await client.pushRegistration)
            let repeated = try await client.submitClientResponse(.clientInput, data: answer)
            #expect(repeated.journeyStepID == JourneyStepID.deviceRegistration)
            #expect(repeated.error?.code == ErrorCode.invalidCredentials)
            #expect(repeated.data?["challenge"]?.stringValue != challenge)
            #expect(repeated.interactionToken != step.interactionToken)
        }
    }

    @Test("an unparsable biometric public key is refused and nothing is stored", arguments: [
        "not base64 at all!", "AAAA", Data(repeating: 4, count: 65).base64EncodedString(),
    ])
    func unparsablePublicKey(publicKey: String) async throws {
        try await TestServer.run { server in
            let client = server.client()
            _ = try await client.startJourney("mobile_registration_by_email")
            let step = try await client.submitClientResponse(.clientInput, data: ["email": "ed@example.com"])
            #expect(step.journeyStepID == JourneyStepID.mobileBiometricsRegistration)
            let answer: JSONValue = ["publicKey": .string(publicKey), "publicKeyId": "k1", "os": "Linux"]
            await expectRefusal(400, ErrorCode.clientResponseNotValid) {
                _ = try await client.submitClientResponse(.clientInput, data: answer)
            }
            let userID = try #require(try await server.admin(.GET, "users").body.arrayValue?.first?["id"]?.stringValue)
            #expect(try await server.admin(.GET, "users/\(userID)/biometric-keys").body.arrayValue?.isEmpty == true)
            // Nothing changed: the same token still answers the same step.
            let retried = try await client.submitClientResponse(
                .clientInput, data: try await TestPhone(client: client).authenticator.registerNativeBiometrics(userIdentifier: "ed@example.com"))
            #expect(retried.journeyStepID == JourneyStepID.deviceRegistration)
        }
    }

    @Test("a biometric key's name holds at most 128 printable ASCII characters: one that would rewrite an auditor's terminal is refused", arguments: [
        "k1\u{1B}[2K", "k1\rforged", "k\u{202E}1", "k 1", "kü", String(repeating: "k", count: 129),
    ])
    func unprintableKeyName(publicKeyID: String) async throws {
        try await TestServer.run { server in
            let client = server.client()
            _ = try await client.startJourney("mobile_registration_by_email")
            let step = try await client.submitClientResponse(.clientInput, data: ["email": "ed@example.com"])
            var answer = try #require(
                try await TestPhone(client: client).authenticator.registerNativeBiometrics(userIdentifier: "ed@example.com").objectValue)
            answer["publicKeyId"] = .string(publicKeyID)
            #expect(step.journeyStepID == JourneyStepID.mobileBiometricsRegistration)
            await expectRefusal(400, ErrorCode.clientResponseNotValid) {
                _ = try await client.submitClientResponse(.clientInput, data: .object(answer))
            }
            answer["publicKeyId"] = .string(String(repeating: "k", count: 128))
            #expect(try await client.submitClientResponse(.clientInput, data: .object(answer)).journeyStepID == JourneyStepID.deviceRegistration)
        }
    }

    @Test("apns and fcm registrations need a push token")
    func pushTokenRequired() async throws {
        try await TestServer.run { server in
            let client = server.client()
            let phone = TestPhone(client: client)
            let step = try await phone.registerUntilDeviceStep(email: "fay@example.com")
            let answer = try await phone.authenticator.registerDevice(
                challenge: try #require(step.data?["challenge"]?.stringValue), name: "P", model: "M",
                push: PushRegistration(channel: "apns", token: nil, appID: "com.example.app"))
            await expectRefusal(400, ErrorCode.clientResponseNotValid) {
                _ = try await client.submitClientResponse(.clientInput, data: answer)
            }
        }
    }
}
