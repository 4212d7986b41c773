import CountersignCore
import Foundation
import Testing

@Suite("Anonymous starts cannot fill the database")
struct StartLimitsTests {
    @Test("a client starts at most its rate in a ten-second window; the rest are 429 rate_limited and store nothing")
    func startsPerClient() async throws {
        try await TestServer.run(adjust: { $0.startRatePerClient = 1; $0.startRatePerAddress = 0 }) { server in
            for _ in 0..<10 {
                #expect(try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web"]).status == .ok)
            }
            let refused = try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web"])
            #expect(refused.status == .tooManyRequests)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.rateLimited))
            let retryAfter = try #require(refused.headers.first(name: "Retry-After").flatMap(Int.init))
            #expect((1...10).contains(retryAfter))
            #expect(try await server.count("interactions") == 10)
            let events = try await server.admin(.GET, "security-events?kind=rate_limited").body["security_events"]?.arrayValue ?? []
            #expect(events.compactMap { $0["detail"]?.stringValue } == ["journey starts refused for client:demo-web"])
            // Another client has its own allowance; the first gets a new one in the next window.
            #expect(try await server.send(.POST, "/v1/journeys/mobile_login/start", json: ["client_id": "demo-native"]).status == .ok)
            server.clock.advance(by: 10)
            #expect(try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web"]).status == .ok)
        }
    }

    @Test("additional_params over 4 KiB are refused and nothing is stored")
    func additionalParamsCap() async throws {
        try await TestServer.run { server in
            let big = String(repeating: "x", count: 4100)
            let refused = try await server.send(
                .POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web", "additional_params": ["note": .string(big)]])
            #expect(refused.status == .badRequest)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            #expect(try await server.count("interactions") == 0)
            let small = try await server.send(
                .POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web", "additional_params": ["note": "fine"]])
            #expect(small.status == .ok)
        }
    }
}
