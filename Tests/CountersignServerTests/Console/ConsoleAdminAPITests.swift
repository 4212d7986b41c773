import CountersignClient
import CountersignCore
import Foundation
import Testing

@Suite("What the console's screens read and do through the admin API")
struct ConsoleAdminAPITests {
    @Test("a test push goes through the chosen configuration to the device, with the provider's answer; another app's device is refused")
    func testPush() async throws {
        try await FakePushProviders.withPhone(on: "apns") { providers, server, phone in
            let configs = try #require(try await server.admin(.GET, "push-configs").body.arrayValue)
            let configID = try #require(configs.first?["id"]?.stringValue)
            server.clock.advance(by: 1)
            let sent = try await server.admin(.POST, "push-configs/\(configID)/test", json: ["device_id": .string(phone.deviceID)])
            #expect(sent.status == .ok && sent.body["delivered"] == true && sent.body["outcome"] == "delivered", "\(sent.body)")
            #expect(try providers.apnsPayload(0)["type"] == "test")

            let inboxPhone = try await RegisteredPhone.register(server, email: "bob@example.com")
            let refused = try await server.admin(.POST, "push-configs/\(configID)/test", json: ["device_id": .string(inboxPhone.deviceID)])
            #expect(refused.status == .badRequest)
            #expect(providers.apns.requests.count == 1)
            let recorded = try #require(try await server.admin(.GET, "security-events?kind=push_config_changed").body["security_events"]?.arrayValue)
            #expect(recorded.first?["detail"]?.stringValue?.contains("test push") == true)
        }
    }

    @Test("the newest approvals list how each ended, and the hourly counts add them up by outcome")
    func approvalsAndHours() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.signIn(email: phone.email)
            try await phone.approve()
            _ = try await browser.poll()
            let listed = try #require(try await server.admin(.GET, "approvals?limit=10").body["approvals"]?.arrayValue)
            #expect(listed.count == 1)
            #expect(listed.first?["status"] == "approved" && listed.first?["device_id"] == .string(phone.deviceID))
            #expect(listed.first?["journey_id"] == "web_login_biometric_only")
            let users = try #require(try await server.admin(.GET, "users?external_user_id=ada@example.com").body.arrayValue)
            let user = try await server.admin(.GET, "users/\(try #require(users.first?["id"]?.stringValue))").body
            #expect(user["devices"]?.arrayValue?.first?["last_used_at"]?.stringValue != nil, "the approval is the device's last use")

            let hours = try #require(try await server.admin(.GET, "stats/approvals?hours=3").body["hours"]?.arrayValue)
            #expect(hours.count == 3)
            #expect(hours.last?["outcomes"]?["approved"] == 1)
            #expect(hours.dropLast().allSatisfy { $0["outcomes"] == .object([:]) })
            #expect(try await server.admin(.GET, "stats/approvals?hours=0").status == .badRequest)
            #expect(try await server.admin(.GET, "stats/approvals?hours=169").status == .badRequest)
        }
    }

    @Test("a journey shows its file, its YAML as written, and what lint says of the file now")
    func journeySourceAndLint() async throws {
        let directory = try TestServer.journeysWithFixtures()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await TestServer.run(adjust: { $0.journeysDirectory = directory }) { server in
            let journey = try await server.admin(.GET, "journeys/web_login").body
            #expect(journey["file"] == "web_login.yaml")
            let written = try String(contentsOfFile: directory + "/web_login.yaml", encoding: .utf8)
            #expect(journey["yaml"] == .string(written))
            #expect(journey["lint"]?["ok"] == true)

            try written.replacingOccurrences(of: "next: done", with: "next: nowhere").write(
                toFile: directory + "/web_login.yaml", atomically: true, encoding: .utf8)
            let edited = try await server.admin(.GET, "journeys/web_login").body
            #expect(edited["lint"]?["ok"] == false)
            #expect(edited["lint"]?["problems"]?.arrayValue?.first?.stringValue?.contains("nowhere") == true)
            #expect(try await server.admin(.GET, "journeys/mobile_login").body["lint"]?["ok"] == true, "another file's problem is not its own")
        }
    }

    @Test("evidence shows whether its signature and the server's seal verify")
    func evidenceVerification() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let step = try await phone.phone.startSigning(as: phone.email)
            let done = try await phone.phone.client.submitClientResponse(.clientInput, data: try await phone.phone.signShown(step, as: phone.email))
            #expect(done.journeyStepID == JourneyStepID.success)
            let listed = try #require(try await server.admin(.GET, "evidence").body["evidence"]?.arrayValue)
            let id = try #require(listed.first?["id"]?.stringValue)
            let verification = try await server.admin(.GET, "evidence/\(id)/verification")
            #expect(verification.status == .ok)
            #expect(verification.body["signature_valid"] == true && verification.body["seal_valid"] == true, "\(verification.body)")
            #expect(try await server.admin(.GET, "evidence/evd_nosuch/verification").status == .notFound)
        }
    }
}
