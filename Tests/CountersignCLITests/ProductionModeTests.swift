import Foundation
import Testing

@Suite("countersign serve without --dev: production defaults")
struct ProductionModeTests {
    static let adminKey = "admin-key-0123456789"
    static let templates = CommandRunner.repositoryRoot.appendingPathComponent("journeys").path

    static func temporaryDirectory(_ prefix: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("no demo application and no email enrollment: a phone registers only with the code the admin API issued, once")
    func enrollmentNeedsACode() async throws {
        let directory = try Self.temporaryDirectory("production")
        let server = try await RunningServer(
            directory: directory, environment: ["COUNTERSIGN_JOURNEYS_DIR": Self.templates, "COUNTERSIGN_ADMIN_KEY": Self.adminKey],
            development: false)
        defer { server.stop() }
        #expect(!server.firstOutput.contains("DEVELOPMENT MODE"))

        // The demo's public clients and the email-trusting registration are not there to abuse.
        let demo = try await server.post("/v1/journeys/mobile_registration/start", json: #"{"client_id":"demo-native"}"#)
        #expect(demo.contains("invalid_client"))
        let byEmail = try await server.post("/v1/journeys/mobile_registration_by_email/start", json: #"{"client_id":"demo-native"}"#)
        #expect(byEmail.contains("not_found"))

        _ = try await server.post("/admin/v1/applications", json: #"{"id":"bank","name":"Bank"}"#, bearer: Self.adminKey)
        _ = try await server.post(
            "/admin/v1/applications/bank/clients", json: #"{"id":"bank-app","name":"Bank app","kind":"native"}"#, bearer: Self.adminKey)
        let issued = try Self.json(try await server.post(
            "/admin/v1/enrollment-codes", json: #"{"external_user_id":"ada","client_id":"bank-app"}"#, bearer: Self.adminKey))
        let link = try #require(issued["enrollment_uri"] as? String)
        #expect(link.hasPrefix("countersign://enroll?server=http://127.0.0.1:\(server.port)&client_id=bank-app&code="))

        let phone = ["COUNTERSIGN_DEVICE_PROFILE": directory.appendingPathComponent("phone").path]
        let registered = try await CommandRunner.run(["device", "register", "--enrollment-uri", link], environment: phone)
        #expect(registered.status == 0, "\(registered.errors)")
        #expect(registered.output.contains("Registered device dev_") && registered.output.contains("for ada"))

        // The same code a second time, by someone who saw it: refused.
        let replay = ["COUNTERSIGN_DEVICE_PROFILE": directory.appendingPathComponent("copycat").path]
        let again = try await CommandRunner.run(["device", "register", "--enrollment-uri", link], environment: replay)
        #expect(again.status != 0)
        #expect(again.errors.contains("invalid_credentials"))
        // And the email way does not exist.
        let email = try await CommandRunner.run(
            ["device", "register", "--server", "http://127.0.0.1:\(server.port)", "--client-id", "bank-app", "--email", "ada"],
            environment: replay)
        #expect(email.status != 0)
        #expect(email.errors.contains("not_found"), "\(email.errors)")
    }

    @Test("one source address starts at most its rate of journeys; the rest are 429 rate_limited")
    func startsPerAddress() async throws {
        let directory = try Self.temporaryDirectory("rate")
        let server = try await RunningServer(directory: directory, environment: [
            "COUNTERSIGN_JOURNEYS_DIR": Self.templates, "COUNTERSIGN_ADMIN_KEY": Self.adminKey, "COUNTERSIGN_START_RATE_PER_ADDRESS": "1",
        ])
        defer { server.stop() }
        // Ten per ten-second window, the starts sent at once: they span as many windows as the machine
        // takes to answer them (two at most unless it is very loaded), with at most ten started in each.
        let sending = ContinuousClock.now
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<25 { group.addTask { try await server.post("/v1/journeys/web_login/start", json: #"{"client_id":"demo-web"}"#) } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        let windowsTouched = Int(sending.duration(to: .now) / .seconds(10)) + 2
        let started = answers.filter { $0.contains("interaction_id") }.count
        #expect(started >= 10 && started <= 10 * windowsTouched, "\(started) started over \(windowsTouched) windows")
        #expect(answers.filter { $0.contains("rate_limited") }.count == 25 - started)
    }

    @Test("a production start refuses a development-only journey, and a database a development start prepared until its demo application is removed")
    func refusesDevelopmentLeftovers() async throws {
        let journeys = try Self.temporaryDirectory("journeys")
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: Self.templates).appendingPathComponent("development/mobile_registration_by_email.yaml"),
            to: journeys.appendingPathComponent("mobile_registration_by_email.yaml"))
        let directory = try Self.temporaryDirectory("production")
        let refused = try await CommandRunner.run(
            ["serve", "--port", "0"], environment: ["COUNTERSIGN_JOURNEYS_DIR": journeys.path, "COUNTERSIGN_ADMIN_KEY": Self.adminKey],
            directory: directory)
        #expect(refused.status != 0)
        #expect((refused.output + refused.errors).contains("mobile_registration_by_email.yaml: journey 'mobile_registration_by_email' is development_only"))

        let environment = ["COUNTERSIGN_JOURNEYS_DIR": Self.templates, "COUNTERSIGN_ADMIN_KEY": Self.adminKey]
        try await RunningServer(directory: directory, environment: environment).stop()
        let leftover = try await CommandRunner.run(["serve", "--port", "0"], environment: environment, directory: directory)
        #expect(leftover.status != 0)
        #expect((leftover.output + leftover.errors).contains("demo application"))

        let removed = try await CommandRunner.run(["migrate", "--remove-demo-application"], environment: environment, directory: directory)
        #expect(removed.status == 0, "\(removed.errors)")
        let production = try await RunningServer(directory: directory, environment: environment, development: false)
        production.stop()
    }
}
