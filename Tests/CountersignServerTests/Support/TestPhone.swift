import CountersignClient
import CountersignCore
import Foundation
import Testing

/// A phone for tests: the Swift SDK with software keys in a file of its own.
struct TestPhone {
    let client: OrchestrationClient
    let authenticator: Authenticator
    let keysURL: URL

    /// `keysURL`: the key file of a phone that already exists (the same phone talking to a restarted server).
    init(client: OrchestrationClient, keysURL: URL? = nil) {
        self.client = client
        self.keysURL = keysURL ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("countersign-tests-\(UUID().uuidString)")
            .appendingPathComponent("keys.json")
        authenticator = Authenticator(keyStore: SoftwareKeyStore(url: self.keysURL))
    }

    /// Runs the development server's `mobile_registration_by_email` up to the device step and returns that step.
    func registerUntilDeviceStep(email: String) async throws -> IdoResponse {
        var step = try await client.startJourney("mobile_registration_by_email")
        #expect(step.journeyStepID == "email_form")
        step = try await client.submitClientResponse(.clientInput, data: ["email": .string(email)])
        #expect(step.journeyStepID == JourneyStepID.mobileBiometricsRegistration)
        let userIdentifier = try #require(step.data?["user_identifier"]?.stringValue)
        step = try await client.submitClientResponse(
            .clientInput, data: try await authenticator.registerNativeBiometrics(userIdentifier: userIdentifier))
        #expect(step.journeyStepID == JourneyStepID.deviceRegistration)
        return step
    }

    /// Runs `mobile_registration_by_email` to its end, keeping the keys when it succeeds (the user
    /// identifier of that journey is the email), and returns the last response.
    @discardableResult
    func register(email: String) async throws -> IdoResponse {
        let step = try await registerUntilDeviceStep(email: email)
        let challenge = try #require(step.data?["challenge"]?.stringValue)
        let done = try await client.submitClientResponse(
            .clientInput,
            data: try await authenticator.registerDevice(
                challenge: challenge, name: "Test phone", model: "Simulated", push: await client.pushRegistration))
        if done.journeyStepID == JourneyStepID.success { try await authenticator.keepRegisteredKeys(userIdentifier: email) }
        return done
    }

    /// Starts `mobile_login` and returns the biometric challenge step.
    func startLogin() async throws -> IdoResponse {
        let step = try await client.startJourney("mobile_login")
        #expect(step.journeyStepID == JourneyStepID.mobileBiometricsAuthentication)
        return step
    }

    /// The signed answer to a biometric challenge step.
    func biometricAnswer(to step: IdoResponse, as userIdentifier: String) async throws -> JSONValue {
        let challenge = try #require(step.data?["biometrics_challenge"]?.stringValue)
        return try await authenticator.authenticateNativeBiometrics(userIdentifier: userIdentifier, challenge: challenge)
    }

    /// Registers `email` and then logs in with biometrics; returns the login's final response.
    func login(as email: String) async throws -> IdoResponse {
        let step = try await startLogin()
        return try await client.submitClientResponse(.clientInput, data: try await biometricAnswer(to: step, as: email))
    }
}
