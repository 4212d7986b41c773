import CountersignCore
import Foundation
import Testing

@Suite("PostgreSQL through its Unix socket", .enabled(if: TestDatabase.postgresURL != nil && TestDatabase.postgresSocket != nil))
struct PostgresSocketTests {
    @Test("a server whose database URL names PostgreSQL's Unix socket serves a whole flow, and listens for other instances' events through it")
    func flowThroughSocket() async throws {
        try await TestDatabase.with { database in
            let throughSocket = try database.throughSocket(try #require(TestDatabase.postgresSocket))
            try await TestServer.run(on: throughSocket, clock: TestClock(), masterKey: TestServer.randomMasterKey()) { server in
                // Ready only once its database answers and its LISTEN connection (the socket too) listens.
                try await eventually("the instance is ready") { try await server.send(.GET, "/readyz").status == .ok }
                let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
                let longPoll = Task { try await phone.inbox(wait: 30) }
                try await eventually("the phone's long-poll is held") { try await server.stats()["inbox_waits_open"] == 1 }
                let browser = TestBrowser(server)
                let waiting = try await browser.signIn(email: "ada@example.com")
                #expect(waiting.journeyStepID == JourneyStepID.mobileApproveAuthentication)
                #expect(try await longPoll.value.count == 1, "the sign-in woke the long-poll")
                _ = try await phone.approve()
                let claims = try await server.verifiedClaims(try #require(try await browser.poll().token))
                #expect(claims.deviceID == phone.deviceID)
            }
        }
    }
}
