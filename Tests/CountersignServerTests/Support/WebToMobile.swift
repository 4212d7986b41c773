import CountersignClient
import CountersignCore
import Foundation
import NIOCore
import NIOHTTP1
import Testing

extension TestServer {
    /// Runs `body` against a server that loads the journey templates and the test fixtures.
    static func runWithFixtures(_ body: (TestServer) async throws -> Void) async throws {
        let journeys = try journeysWithFixtures()
        defer { try? FileManager.default.removeItem(atPath: journeys) }
        try await run(adjust: { $0.journeysDirectory = journeys }, body)
    }

    /// A journeys directory with the shipped templates (the development ones in `development/`) plus the
    /// test fixtures.
    static func journeysWithFixtures() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journeys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: journeysDirectory).appendingPathComponent("development"),
            to: directory.appendingPathComponent("development"))
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")
        for source in [URL(fileURLWithPath: journeysDirectory), fixtures] {
            for file in try FileManager.default.contentsOfDirectory(at: source, includingPropertiesForKeys: nil) where file.pathExtension == "yaml" {
                try FileManager.default.copyItem(at: file, to: directory.appendingPathComponent(file.lastPathComponent))
            }
        }
        return directory.path
    }
}

extension TestServer {
    /// Opens the events stream of interaction `id` in the background; the task ends with the stream.
    func openEventsStream(_ id: String, token: String) -> Task<TestResponse, any Error> {
        let app = app
        return Task {
            try await TestServer.request(app, .GET, "/v1/interactions/\(id)/events", headers: ["Authorization": "Bearer \(token)"])
        }
    }

    /// Opens the events stream of interaction `id` and waits until the server holds it, `streamsOpen`
    /// streams in all.
    func openHeldEventsStream(_ id: String, token: String?, streamsOpen: Int = 1) async throws -> Task<TestResponse, any Error> {
        let stream = openEventsStream(id, token: try #require(token))
        try await eventually("\(streamsOpen) event streams are open") { try await stats()["event_streams_open"] == .number(Double(streamsOpen)) }
        return stream
    }

    /// The admin API's statistics.
    func stats() async throws -> JSONValue {
        try await admin(.GET, "stats").body
    }

    /// Starts `web_login` over raw HTTP and submits `email`; returns the interaction id and the token
    /// of the waiting step.
    func waitingWebLogin(_ journey: String = "web_login_biometric_only", email: String) async throws -> (id: String, token: String) {
        let (id, token, _) = try await waitingWebLoginWithStartToken(journey, email: email)
        return (id, token)
    }

    /// As `waitingWebLogin`, with the start's token too, which the email's answer replaced.
    func waitingWebLoginWithStartToken(
        _ journey: String = "web_login_biometric_only", email: String
    ) async throws -> (id: String, token: String, startToken: String) {
        let started = try await send(.POST, "/v1/journeys/\(journey)/start", json: ["client_id": "demo-web"])
        let id = try #require(started.body["interaction_id"]?.stringValue)
        let startToken = try #require(started.body["interaction_token"]?.stringValue)
        let waiting = try await send(
            .POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": ["email": .string(email)]],
            bearer: startToken)
        #expect(waiting.body["journey_step_id"] == .string(JourneyStepID.mobileApproveAuthentication))
        return (id, try #require(waiting.body["interaction_token"]?.stringValue), startToken)
    }

    /// Answers interaction `id`'s step with `option` and no data, over raw HTTP, as a browser's poll does.
    func submit(_ id: String, _ option: String, bearer: String) async throws -> (status: HTTPStatus, body: JSONValue, headers: HTTPHeaders) {
        try await send(.POST, "/v1/interactions/\(id)/submit", json: ["option": .string(option), "data": [:]], bearer: bearer)
    }
}

/// A registered phone and its device id, ready to answer approvals.
struct RegisteredPhone {
    let phone: TestPhone
    let deviceID: String
    let email: String

    /// Registers a phone for `email` through `client` (default: in-process).
    static func register(_ server: TestServer, email: String, client: OrchestrationClient? = nil) async throws -> RegisteredPhone {
        let phone = TestPhone(client: client ?? server.client())
        let done = try await phone.register(email: email)
        // Registrations happen at distinct instants, as on a running server: devices are listed newest first.
        server.clock.advance(by: 0.001)
        return RegisteredPhone(phone: phone, deviceID: try #require(done.data?["device_id"]?.stringValue), email: email)
    }

    /// The push payloads waiting in this phone's inbox.
    func inbox(wait: Int = 0, now: Date = Date()) async throws -> [[String: String]] {
        try await phone.client.pendingApprovals(deviceID: deviceID, authenticator: phone.authenticator, wait: wait, now: now)
    }

    /// Starts the mobile approve journey of the first pending approval.
    func startApproval(now: Date = Date()) async throws -> IdoResponse {
        let payload = try #require(try await inbox(now: now).first)
        return try await phone.client.startMobileApproveJourney(
            payload: payload, deviceID: deviceID, authenticator: phone.authenticator, now: now)
    }

    /// Approves the first pending approval with biometrics (typing `otp` first when given).
    @discardableResult
    func approve(otp: String? = nil, now: Date = Date()) async throws -> IdoResponse {
        var step = try await startApproval(now: now)
        if let otp {
            #expect(step.journeyStepID == JourneyStepID.otpValidation)
            step = try await phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(otp)])
        }
        #expect(step.journeyStepID == JourneyStepID.mobileBiometricsAuthentication)
        return try await phone.client.submitClientResponse(.clientInput, data: try await phone.biometricAnswer(to: step, as: email))
    }
}

/// A browser running a web journey through the SDK.
struct TestBrowser {
    let client: OrchestrationClient

    init(_ server: TestServer) {
        client = server.client("demo-web")
    }

    init(client: OrchestrationClient) {
        self.client = client
    }

    /// Starts `journey`, submits the email, and returns the waiting (or device choice) step.
    func signIn(_ journey: String = "web_login_biometric_only", email: String) async throws -> IdoResponse {
        let form = try await client.startJourney(journey)
        #expect(form.journeyStepID == "login")
        return try await client.submitClientResponse(.clientInput, data: ["email": .string(email)])
    }

    /// Starts `journey` (one whose phone types a web code), submits the email, and returns the code shown.
    func codeShown(_ journey: String = "web_login", email: String) async throws -> String {
        try #require(try await signIn(journey, email: email).data?["otp"]?.stringValue)
    }

    /// Polls once.
    func poll() async throws -> IdoResponse {
        try await client.submitClientResponse(.clientInput, data: [:])
    }
}
