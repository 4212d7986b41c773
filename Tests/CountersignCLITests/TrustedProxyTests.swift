import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `X-Forwarded-For` names the client only when a trusted load balancer sends it
/// (`COUNTERSIGN_TRUSTED_PROXIES`); from anyone else it is ignored.
@Suite("Client addresses behind a load balancer")
struct TrustedProxyTests {
    /// The limit is one start a second per address, counted in windows of 10 s: 21 starts sent at once
    /// span at most two windows, however slow the machine, so 11 or more fall in one of them, past its 10.
    static let starts = 21

    /// Starts of `web_login` sent at once, each claiming the client address given; their statuses.
    private func startsClaiming(_ addresses: [String], on server: RunningServer) async throws -> [Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for address in addresses {
                group.addTask {
                    try await exchange(
                        server.url + "/v1/journeys/web_login/start", json: #"{"client_id":"demo-web"}"#, headers: ["X-Forwarded-For": address]
                    ).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    private func server(trusting proxies: String?) async throws -> RunningServer {
        var environment = [
            "COUNTERSIGN_JOURNEYS_DIR": ProductionModeTests.templates,
            "COUNTERSIGN_START_RATE_PER_ADDRESS": "1",
        ]
        environment["COUNTERSIGN_TRUSTED_PROXIES"] = proxies
        return try await RunningServer(directory: try ProductionModeTests.temporaryDirectory("proxy"), environment: environment)
    }

    @Test("a client that names a new address in X-Forwarded-For on every start is still limited by its own address")
    func forgedForwardedForIsIgnored() async throws {
        let server = try await server(trusting: nil)
        defer { server.stop() }
        let statuses = try await startsClaiming((1...Self.starts).map { "203.0.113.\($0)" }, on: server)
        #expect(statuses.contains(429))
    }

    @Test("behind a trusted load balancer each client is limited by the address the balancer names")
    func trustedProxyNamesTheClient() async throws {
        let server = try await server(trusting: "127.0.0.1")
        defer { server.stop() }
        #expect(try await startsClaiming((1...Self.starts).map { "203.0.113.\($0)" }, on: server).allSatisfy { $0 == 200 })
        #expect(try await startsClaiming(Array(repeating: "198.51.100.7", count: Self.starts), on: server).contains(429))
    }

    @Test("behind a balancer that writes the client with its port, a client's own entry to the left of it is still ignored")
    func balancerEntryWithPort() async throws {
        let server = try await server(trusting: "127.0.0.1")
        defer { server.stop() }
        // What a client sends (a new address each time), then what the balancer adds: the client's address
        // and port, a new port for each connection.
        let claims = (1...Self.starts).map { "203.0.113.\($0), 198.51.100.7:\(41_000 + $0)" }
        #expect(try await startsClaiming(claims, on: server).contains(429))
    }
}
