import CountersignCore
import Foundation
import Testing

/// Many calls writing at once: on SQLite they share one writer connection, so every call must wait its
/// turn and commit whole, never fail with a busy database or land half inside another's transaction.
@Suite("Concurrent writes")
struct ConcurrentWritesTests {
    @Test("forty sign-ins started at once each create their approval and push, and every phone answer lands")
    func concurrentSignIns() async throws {
        // Forty requests for two people at once is what the push-fatigue limits stop: they are off here.
        try await TestServer.runWithFixtures { server in
            let phones = [
                try await RegisteredPhone.register(server, email: "ada@example.com"),
                try await RegisteredPhone.register(server, email: "bo@example.com"),
            ]
            let signIns = 40
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<signIns {
                    group.addTask { _ = try await server.waitingWebLogin("web_login_unlimited", email: phones[index % 2].email) }
                }
                try await group.waitForAll()
            }
            let stats = try await server.admin(.GET, "stats").body
            #expect(stats["approvals_pending"] == .number(Double(signIns)))
            #expect(stats["push_jobs_stored"] == .number(Double(signIns)))
            #expect(stats["interactions_stored"] == .number(Double(signIns + 2)))

            // Both phones answer everything pending for them, side by side: each answer is its own transaction.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for phone in phones {
                    group.addTask {
                        for _ in 0..<(signIns / 2) {
                            let answered = try await phone.approve()
                            #expect(answered.journeyStepID == JourneyStepID.success)
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await server.stats()["approvals_pending"] == .number(0))
        }
    }
}
