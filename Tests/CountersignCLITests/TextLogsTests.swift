import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Text logs and LOG_LEVEL")
struct TextLogsTests {
    /// A production server writing text logs, with `LOG_LEVEL` set to `level` (unset when nil).
    static func server(logLevel level: String?) async throws -> RunningServer {
        var environment = ["COUNTERSIGN_ADMIN_KEY": ProductionModeTests.adminKey, "COUNTERSIGN_JOURNEYS_DIR": ProductionModeTests.templates]
        environment["LOG_LEVEL"] = level
        return try await RunningServer(directory: try ProductionModeTests.temporaryDirectory("text-logs"), environment: environment)
    }

    @Test("with no LOG_LEVEL, info, or debug and trace (raised to info), each answered request is logged at info under its id, and nothing below info is written",
          arguments: [nil, "info", "debug", "trace"])
    func infoByDefault(level: String?) async throws {
        let server = try await Self.server(logLevel: level)
        defer { server.stop() }
        let start = try await exchange(server.url + "/v1/journeys/web_login/start", json: #"{"client_id":"demo-web"}"#)
        let requestID = try #require(start.header("X-Request-Id"))
        try await eventually("the request is logged") { server.output.contains(requestID) }
        let line = try #require(server.output.split(separator: "\n").first { $0.contains(requestID) })
        #expect(line.contains(" info countersign:") && line.hasSuffix("] request"))
        #expect(line.contains("route=/v1/journeys/{journeyID}/start"))
        #expect(!server.output.contains(" debug ") && !server.output.contains(" trace "))
    }

    @Test("an unreadable LOG_LEVEL is warned about, and the server logs at info")
    func unreadableLevel() async throws {
        let server = try await Self.server(logLevel: "verbose")
        defer { server.stop() }
        #expect(server.output.contains("LOG_LEVEL 'verbose' is not a level"))
        let start = try await exchange(server.url + "/v1/journeys/web_login/start", json: #"{"client_id":"demo-web"}"#)
        let requestID = try #require(start.header("X-Request-Id"))
        try await eventually("the request is logged at info") { server.output.contains(requestID) }
    }

    @Test("LOG_LEVEL=notice, in any case, leaves out the lines per request", arguments: ["notice", "NOTICE"])
    func notice(level: String) async throws {
        let server = try await Self.server(logLevel: level)
        defer { server.stop() }
        let start = try await exchange(server.url + "/v1/journeys/web_login/start", json: #"{"client_id":"demo-web"}"#)
        let requestID = try #require(start.header("X-Request-Id"))
        // A security event is logged at warning: once it is there, an earlier request's line would be too.
        _ = try await server.get("/admin/v1/users", bearer: "guessed-admin-key-0123456789")
        try await eventually("the security event is logged") { server.output.contains("security event") }
        #expect(!server.output.contains(requestID))
    }
}
