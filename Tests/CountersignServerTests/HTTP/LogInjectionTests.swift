import CountersignCore
import CountersignServer
import Foundation
import Logging
import Testing

/// An id with a line break went from the admin API or a journey into a security event's detail, and so
/// into the text log, where it began a line that read as the server's own.
@Suite("Log-line injection: no control character in an id, none written to a text log")
struct LogInjectionTests {
    static let forged = "ada@example.com\n[ WARNING ] admin key accepted"

    @Test("an enrollment code for an id with a control character is refused, and nothing is issued", arguments: [
        forged, "ada\r", "ada\u{202E}moc.elpmaxe", "ada\u{0}", "ada\u{2028}x",
    ])
    func enrollmentCode(id: String) async throws {
        try await TestServer.run { server in
            let refused = try await server.admin(.POST, "enrollment-codes", json: ["external_user_id": .string(id), "client_id": "demo-native"])
            #expect(refused.status == .badRequest)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            #expect(try await server.count("enrollment_codes") == 0)
            #expect(try await server.admin(.POST, "enrollment-codes", json: ["external_user_id": "ada@example.com", "client_id": "demo-native"]).status == .created)
        }
    }

    @Test("a journey given such an id by the relying party refuses it: nothing waits, nothing is stored for it", arguments: [forged, "ada@example.com\u{202E}"])
    func journeyIdentifier(id: String) async throws {
        try await TestServer.runWithFixtures { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            let started = try await server.send(
                .POST, "/v1/journeys/web_login_by_param/start", json: ["client_id": "demo-web", "additional_params": ["email": .string(id)]])
            #expect(started.body["journey_step_id"] == .string(JourneyStepID.rejection))
            #expect(try await server.count("approvals") == 0)
            #expect(try await server.count("decoy_approvals") == 0)
        }
    }

    @Test("a phone answering a sign-in with such an id is refused as a malformed answer, not looked up")
    func biometricAnswer() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let step = try await phone.startLogin()
            var answer = try #require(try await phone.biometricAnswer(to: step, as: "ada@example.com").objectValue)
            answer["userIdentifier"] = .string(Self.forged)
            await expectRefusal(400, ErrorCode.clientResponseNotValid) {
                _ = try await phone.client.submitClientResponse(.clientInput, data: .object(answer))
            }
        }
    }

    @Test("the text log handler writes a message's and the metadata's control characters as escapes")
    func textLogEscapes() {
        let store = LogStore()
        let logger = Logger(label: "test") { _ in EscapingLogHandler(CapturingLogHandler(store: store)) }
        logger.warning("security event \(Self.forged)", metadata: ["detail": .string(Self.forged), "list": .array([.string("a\nb")])])
        let written = store.lines.withLock { $0 }
        #expect(written.count == 1)
        #expect(written.allSatisfy { !$0.contains("\n") })
        #expect(written.first?.contains(#"ada@example.com\u{A}[ WARNING ] admin key accepted"#) == true)
    }
}
