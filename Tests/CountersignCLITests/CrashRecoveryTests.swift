import CountersignClient
import CountersignCore
import Foundation
import SimulatedPhone
import Testing

/// Every answer follows the commit of what it reports, and the flow's state lives in the database: a
/// server killed outright between any two steps, and started again on the same database, carries on.
@Suite("Crash recovery")
struct CrashRecoveryTests {
    /// The server in `directory`, killed and started again on the same port, database and master key.
    final class CrashingServer {
        let directory: URL
        let environment: [String: String]
        private(set) var server: RunningServer
        private(set) var restarts = 0

        init() async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            environment = [
                "COUNTERSIGN_JOURNEYS_DIR": CommandRunner.repositoryRoot.appendingPathComponent("journeys").path,
                "COUNTERSIGN_ADMIN_KEY": "admin-key-0123456789",
            ]
            server = try await RunningServer(directory: directory, environment: environment)
        }

        var url: String { "http://127.0.0.1:\(server.port)" }

        /// SIGKILL, then a fresh process on the same database.
        func crashAndRestart() async throws {
            server.kill()
            server = try await RunningServer(directory: directory, environment: environment, port: server.port)
            restarts += 1
        }
    }

    @Test("a web sign-in with its web code finishes although the server is killed with SIGKILL after every step")
    func flowSurvivesKillsAfterEveryStep() async throws {
        let crashing = try await CrashingServer()
        defer { crashing.server.stop() }
        let phoneDirectory = crashing.directory.appendingPathComponent("phone")
        let profile = try await SimulatedPhone.register(
            server: crashing.url, clientID: "demo-native", enrollment: .email("kay@example.com"), name: "Kay's phone", directory: phoneDirectory)
        try await crashing.crashAndRestart()

        let browser = OrchestrationClient(baseURL: URL(string: crashing.url)!, clientID: "demo-web")
        _ = try await browser.startJourney("web_login")
        try await crashing.crashAndRestart()
        let waiting = try await browser.submitClientResponse(.clientInput, data: ["email": "kay@example.com"])
        #expect(waiting.journeyStepID == JourneyStepID.mobileApproveAuthentication)
        let otp = try #require(waiting.data?["otp"]?.stringValue)
        try await crashing.crashAndRestart()

        let phone = try SimulatedPhone(profile: profile, directory: phoneDirectory)
        let pending = try await phone.pending()
        #expect(pending.count == 1)
        try await crashing.crashAndRestart()
        var step = try await phone.open(try #require(pending.first))
        #expect(step.journeyStepID == JourneyStepID.otpValidation)
        try await crashing.crashAndRestart()
        step = try await phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(otp)])
        #expect(step.journeyStepID == JourneyStepID.mobileBiometricsAuthentication)
        let challenge = try #require(step.data?["biometrics_challenge"]?.stringValue)
        try await crashing.crashAndRestart()
        step = try await phone.client.submitClientResponse(
            .clientInput, data: try await phone.authenticator.authenticateNativeBiometrics(userIdentifier: profile.userIdentifier, challenge: challenge))
        #expect(step.journeyStepID == JourneyStepID.success)
        try await crashing.crashAndRestart()

        let done = try await browser.submitClientResponse(.clientInput, data: [:])
        #expect(done.journeyStepID == JourneyStepID.success)
        let token = try #require(done.token)
        #expect(try claims(of: token)["device_id"] == .string(profile.deviceID))
        #expect(crashing.restarts == 7)
    }

    /// The token's claims, read without verifying (the flow's tests verify tokens against the JWKS).
    private func claims(of token: String) throws -> [String: JSONValue] {
        let parts = token.split(separator: ".")
        let payload = try #require(LenientBase64.decode(String(parts[1])))
        return try #require(try JSONDecoder().decode(JSONValue.self, from: payload).objectValue)
    }
}
