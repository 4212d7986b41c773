import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("countersign device: the simulated phone")
struct DeviceCommandTests {
    /// A browser over plain HTTP: start a journey, answer its steps with the rotating token.
    final class Browser {
        let server: RunningServer
        var interactionID = ""
        var token = ""

        init(server: RunningServer) { self.server = server }

        func start(_ journey: String) async throws -> [String: Any] {
            try await remember(try await server.post("/v1/journeys/\(journey)/start", json: #"{"client_id":"demo-web"}"#))
        }

        func submit(_ json: String) async throws -> [String: Any] {
            try await remember(try await server.post("/v1/interactions/\(interactionID)/submit", json: json, bearer: token))
        }

        private func remember(_ text: String) async throws -> [String: Any] {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            interactionID = object["interaction_id"] as? String ?? interactionID
            token = object["interaction_token"] as? String ?? token
            return object
        }
    }

    /// A running server and a simulated phone registered for `email`; returns the server and the
    /// environment naming the phone's profile. `limitsOff` turns web_login_biometric_only's push-fatigue limits off, so
    /// that several requests can wait for one phone.
    static func serverWithPhone(email: String, limitsOff: Bool = false) async throws -> (RunningServer, [String: String]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let journeys = directory.appendingPathComponent("journeys")
        try FileManager.default.copyItem(at: CommandRunner.repositoryRoot.appendingPathComponent("journeys"), to: journeys)
        if limitsOff {
            let webLogin = journeys.appendingPathComponent("development/web_login_biometric_only.yaml")
            try String(contentsOf: webLogin, encoding: .utf8)
                .replacingOccurrences(of: "expires_in: 300", with: "expires_in: 300\n      one_pending_per_user: false\n      backoff_seconds: 0")
                .write(to: webLogin, atomically: true, encoding: .utf8)
        }
        let server = try await RunningServer(directory: directory, environment: [
            "COUNTERSIGN_JOURNEYS_DIR": journeys.path,
            "COUNTERSIGN_ADMIN_KEY": "admin-key-0123456789",
        ])
        let profile = ["COUNTERSIGN_DEVICE_PROFILE": directory.appendingPathComponent("phone").path]
        let registered = try await CommandRunner.run(
            ["device", "register", "--server", "http://127.0.0.1:\(server.port)", "--email", email], environment: profile)
        #expect(registered.status == 0, "\(registered.errors)")
        #expect(registered.output.contains("Registered device dev_"))
        return (server, profile)
    }

    @Test("a server that is no http(s) URL is a usage error naming it, not a crash", arguments: ["bad url", "ftp://127.0.0.1", "127.0.0.1:8080"])
    func badServer(server: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let refused = try await CommandRunner.run(
            ["device", "register", "--server", server, "--email", "ada@example.com"],
            environment: ["COUNTERSIGN_DEVICE_PROFILE": directory.path])
        #expect(refused.status == 64, "\(refused.errors)")
        #expect(refused.errors.contains("'\(server)' is not a server URL"), "\(refused.errors)")
    }

    @Test("register, then approve from the command line: the web login succeeds; with nothing pending the exit code is 3")
    func approveDrivesWebLogin() async throws {
        let (server, profile) = try await Self.serverWithPhone(email: "ada@example.com")
        defer { server.stop() }

        let browser = Browser(server: server)
        _ = try await browser.start("web_login_biometric_only")
        let waiting = try await browser.submit(#"{"option":"client_input","data":{"email":"ada@example.com"}}"#)
        #expect(waiting["journey_step_id"] as? String == "mobile_approve_authentication")

        let pending = try await CommandRunner.run(["device", "pending"], environment: profile)
        #expect(pending.status == 0)
        #expect(pending.output.contains("Countersign Demo asks for approval"))

        let approved = try await CommandRunner.run(["device", "approve"], environment: profile)
        #expect(approved.status == 0, "\(approved.errors)")

        let done = try await browser.submit(#"{"option":"client_input","data":{}}"#)
        #expect(done["journey_step_id"] as? String == "action:success")
        #expect((done["token"] as? String)?.isEmpty == false)

        let nothing = try await CommandRunner.run(["device", "approve"], environment: profile)
        #expect(nothing.status == 3)
    }

    @Test("a web OTP request needs --otp (exit 2, still pending), then approves with the code; deny fails the web login")
    func otpAndDenyFromTheCommandLine() async throws {
        let (server, profile) = try await Self.serverWithPhone(email: "bo@example.com")
        defer { server.stop() }

        let browser = Browser(server: server)
        _ = try await browser.start("web_login")
        let waiting = try await browser.submit(#"{"option":"client_input","data":{"email":"bo@example.com"}}"#)
        let otp = try #require((waiting["data"] as? [String: Any])?["otp"] as? String)

        let withoutCode = try await CommandRunner.run(["device", "approve"], environment: profile)
        #expect(withoutCode.status == 2)
        #expect(withoutCode.errors.contains("--otp"))

        let withCode = try await CommandRunner.run(["device", "approve", "--otp", otp], environment: profile)
        #expect(withCode.status == 0, "\(withCode.errors)")
        let signedIn = try await browser.submit(#"{"option":"client_input","data":{}}"#)
        #expect(signedIn["journey_step_id"] as? String == "action:success")

        _ = try await browser.start("web_login_biometric_only")
        _ = try await browser.submit(#"{"option":"client_input","data":{"email":"bo@example.com"}}"#)
        #expect(try await CommandRunner.run(["device", "deny"], environment: profile).status == 0)
        let rejected = try await browser.submit(#"{"option":"client_input","data":{}}"#)
        #expect(rejected["journey_step_id"] as? String == "action:rejection")
    }

    @Test("with two requests waiting the phone answers only the one named; deny --not-me reports the other")
    func namedRequests() async throws {
        let (server, profile) = try await Self.serverWithPhone(email: "di@example.com", limitsOff: true)
        defer { server.stop() }
        let first = Browser(server: server)
        _ = try await first.start("web_login_biometric_only")
        _ = try await first.submit(#"{"option":"client_input","data":{"email":"di@example.com"}}"#)
        let second = Browser(server: server)
        _ = try await second.start("web_login_biometric_only")
        _ = try await second.submit(#"{"option":"client_input","data":{"email":"di@example.com"}}"#)
        let pending = try await CommandRunner.run(["device", "pending"], environment: profile)
        let ids = pending.output.matches(of: /request (apr_[A-Za-z0-9_-]+)/).map { String($0.1) }
        #expect(ids.count == 2)

        let unnamed = try await CommandRunner.run(["device", "approve"], environment: profile)
        #expect(unnamed.status == 2)
        #expect(unnamed.errors.contains("Several requests are waiting"))

        let approved = try await CommandRunner.run(["device", "approve", ids[1]], environment: profile)
        #expect(approved.status == 0, "\(approved.errors)")
        let reported = try await CommandRunner.run(["device", "deny", "--not-me", ids[0]], environment: profile)
        #expect(reported.status == 0, "\(reported.errors)")
        #expect(reported.output.contains("Reported as not mine"))

        let outcomes = [try await first.submit(#"{"option":"client_input","data":{}}"#), try await second.submit(#"{"option":"client_input","data":{}}"#)]
        #expect(Set(outcomes.compactMap { $0["journey_step_id"] as? String }) == ["action:success", "action:rejection"])
        let events = try await server.get("/admin/v1/security-events?kind=not_me", bearer: "admin-key-0123456789")
        #expect(events.contains(ids[0]))
    }

    @Test("watch --auto-approve answers a request as it arrives")
    func watchApproves() async throws {
        let (server, profile) = try await Self.serverWithPhone(email: "cy@example.com")
        defer { server.stop() }

        let watch = Task.detached { try await CommandRunner.run(["device", "watch", "--auto-approve", "--count", "1"], environment: profile) }
        let browser = Browser(server: server)
        _ = try await browser.start("web_login_biometric_only")
        _ = try await browser.submit(#"{"option":"client_input","data":{"email":"cy@example.com"}}"#)
        let watched = try await watch.value
        #expect(watched.status == 0, "\(watched.errors)")
        #expect(watched.output.contains("for: cy@example.com"))
        #expect(watched.output.contains("from: ") && watched.output.contains("127.0.0.1"), "the phone shows where the request came from")
        #expect(watched.output.contains("approved"))
        let done = try await browser.submit(#"{"option":"client_input","data":{}}"#)
        #expect(done["journey_step_id"] as? String == "action:success")
    }
}
