import CountersignClient
import CountersignCore
import CountersignServer
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every log line (message and metadata) written through any copy of `CapturingLogHandler`.
final class LogStore: Sendable {
    let lines = Mutex<[String]>([])
}

/// A log handler whose lines all land in one store.
struct CapturingLogHandler: LogHandler {
    let store: LogStore
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        store.lines.withLock { $0.append("\(event.level) \(event.message) \(all)") }
    }
}

@Suite("Secrets stay out of the logs")
struct SecretLoggingTests {
    /// How the server's lines are written: as text, or as the JSON objects of `LOG_FORMAT=json`.
    enum Format: String, CaseIterable, Sendable {
        case text, json

        func handler(_ store: LogStore) -> any LogHandler {
            switch self {
            case .text: CapturingLogHandler(store: store)
            case .json: JSONLogHandler(label: "countersign.tests.capture", level: .trace) { line in store.lines.withLock { $0.append(line) } }
            }
        }
    }

    @Test("a web OTP sign-in over real HTTP, wrong code included, and an enrollment code issued and redeemed log no OTP, interaction token, token, enrollment code or admin key", arguments: Format.allCases)
    func nothingSecretIsLogged(format: Format) async throws {
        let store = LogStore()
        var secrets: [String] = [TestServer.adminKey]
        let capture = Logger(label: "countersign.tests.capture") { _ in format.handler(store) }
        try await TestServer.run(logger: capture) { server in try await server.listening { port in
            let base = URL(string: "http://127.0.0.1:\(port)")!
            let phone = try await RegisteredPhone.register(
                server, email: "ada@example.com",
                client: OrchestrationClient(baseURL: base, clientID: "demo-native"))
            let browser = TestBrowser(client: OrchestrationClient(baseURL: base, clientID: "demo-web"))
            let start = try await browser.client.startJourney("web_login")
            let waiting = try await browser.client.submitClientResponse(.clientInput, data: ["email": "ada@example.com"])
            let otp = try #require(waiting.data?["otp"]?.stringValue)
            let mobile = try await phone.startApproval()
            let wrong = try await phone.phone.client.submitClientResponse(
                .clientInput, data: ["passcode": otp == "000000" ? "111111" : "000000"])
            #expect(wrong.error?.code == ErrorCode.invalidCredentials)
            let biometrics = try await phone.phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(otp)])
            let approved = try await phone.phone.client.submitClientResponse(
                .clientInput, data: try await phone.phone.biometricAnswer(to: biometrics, as: "ada@example.com"))
            #expect(approved.journeyStepID == JourneyStepID.success)
            let done = try await browser.poll()
            #expect(done.journeyStepID == JourneyStepID.success)
            secrets += [otp] + [start, waiting, mobile, wrong, biometrics].compactMap(\.interactionToken)
            secrets += [approved.token, done.token].compactMap { $0 }

            // An enrollment code issued by the admin API and redeemed by a new phone.
            let issued = try await server.admin(
                .POST, "enrollment-codes", json: ["external_user_id": "bob@example.com", "client_id": "demo-native"])
            let code = try #require(issued.body["code"]?.stringValue)
            let newPhone = OrchestrationClient(baseURL: base, clientID: "demo-native")
            #expect(try await newPhone.startJourney("mobile_registration").journeyStepID == JourneyStepID.enrollmentCode)
            let redeemed = try await newPhone.submitClientResponse(.clientInput, data: ["enrollment_code": .string(code)])
            #expect(redeemed.journeyStepID == JourneyStepID.mobileBiometricsRegistration)
            secrets += [code, code.replacingOccurrences(of: "-", with: "")]

            // A wrong admin key is a security event, logged at the default level, without the key.
            let guessed = "guessed-admin-key-0123456789"
            var adminRequest = URLRequest(url: base.appendingPathComponent("admin/v1/users"))
            adminRequest.setValue("Bearer \(guessed)", forHTTPHeaderField: "Authorization")
            _ = try await URLSession.shared.data(for: adminRequest)
            secrets.append(guessed)
        } }

        let lines = store.lines.withLock { $0 }
        #expect(lines.contains { $0.contains("/v1/interactions/") }, "requests were logged, so the check below means something")
        switch format {
        case .text:
            #expect(lines.contains { $0.hasPrefix("warning security event") && $0.contains("admin_auth_failed") })
        case .json:
            let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] }
            #expect(objects.count == lines.count, "every line is one JSON object of strings")
            #expect(objects.contains { $0["level"] == "warning" && $0["security_event"] == "admin_auth_failed" })
        }
        for secret in secrets {
            let leaking = lines.filter { $0.contains(secret) }
            #expect(leaking.isEmpty, "log lines contain a secret: \(leaking.map { $0.replacingOccurrences(of: secret, with: "<secret>") })")
        }
    }

    @Test("a flood of wrong admin keys writes one warning line a minute, not one a request")
    func floodLoggedOnce() async throws {
        let store = LogStore()
        try await TestServer.run(logger: Logger(label: "countersign.tests.capture") { _ in Format.text.handler(store) }) { server in
            for _ in 0..<30 { _ = try await server.send(.GET, "/admin/v1/users", bearer: "guessed-admin-key-0123456789") }
        }
        let warnings = store.lines.withLock { $0 }.filter { $0.hasPrefix("warning security event") && $0.contains("admin_auth_failed") }
        #expect(warnings.count == 1)
    }
}
