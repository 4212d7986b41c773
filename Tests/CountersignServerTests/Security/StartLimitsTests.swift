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

    /// A server behind a trusted balancer with these limits in starts per second; `body` starts
    /// `web_login` as a client at the address given and gets the status.
    private func behindBalancer(
        perClient: Int, perAddress: Int, _ body: (_ startFrom: (String) async throws -> Int) async throws -> Void
    ) async throws {
        try await TestServer.runBehindBalancer(adjust: { $0.startRatePerClient = perClient; $0.startRatePerAddress = perAddress }) { _, port in
            try await body { address in
                try await statusThroughBalancer(port: port, "POST", "/v1/journeys/web_login/start", json: #"{"client_id":"demo-web"}"#, from: address)
            }
        }
    }

    @Test("a client that takes a new IPv6 address of its /64 for every start is limited as one address")
    func ipv6AddressesOfOneBlock() async throws {
        try await behindBalancer(perClient: 0, perAddress: 1) { (startFrom: (String) async throws -> Int) async throws in
            for host in 1...10 { #expect(try await startFrom("2001:db8:1:2::\(host)") == 200) }
            #expect(try await startFrom("2001:db8:1:2:ffff:ffff:ffff:ffff") == 429)
            // The next /64, and IPv4 addresses however written, are others.
            #expect(try await startFrom("2001:db8:1:3::1") == 200)
            for host in 1...10 { #expect(try await startFrom("::ffff:203.0.113.\(host)") == 200) }
        }
    }

    @Test("a few busy addresses cannot use up their client's allowance for everyone: an address's first start still gets in, from a bounded reserve")
    func busyAddressesLeaveOthersTheirFirstStart() async throws {
        // 20 starts a window for the client, 10 for an address.
        try await behindBalancer(perClient: 2, perAddress: 1) { (startFrom: (String) async throws -> Int) async throws in
            for busy in ["198.51.100.1", "198.51.100.2"] {
                for _ in 1...10 { #expect(try await startFrom(busy) == 200) }
            }
            #expect(try await startFrom("198.51.100.3") == 200)
            #expect(try await startFrom("198.51.100.3") == 429)
            // The reserve is half the client's allowance: 10 first starts in all, then nothing.
            for host in 4...12 { #expect(try await startFrom("198.51.100.\(host)") == 200) }
            #expect(try await startFrom("198.51.100.13") == 429)
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

    @Test("a correlation_id over 128 characters is refused and nothing is stored: it would be kept with the interaction and its approvals")
    func correlationIDCap() async throws {
        try await TestServer.run { server in
            let refused = try await server.send(.POST, "/v1/journeys/web_login/start", json: [
                "client_id": "demo-web", "correlation_id": .string(String(repeating: "c", count: 129)),
            ])
            #expect(refused.status == .badRequest)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            #expect(try await server.count("interactions") == 0)
            let fits = try await server.send(.POST, "/v1/journeys/web_login/start", json: [
                "client_id": "demo-web", "correlation_id": .string(String(repeating: "c", count: 128)),
            ])
            #expect(fits.status == .ok)
        }
    }
}
