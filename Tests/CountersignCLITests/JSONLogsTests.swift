import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("LOG_FORMAT=json")
struct JSONLogsTests {
    @Test("every line is one JSON object; a request's line has its id (also sent as X-Request-Id), route, status and duration; a security event its name")
    func linesAnOperatorCanParse() async throws {
        let server = try await RunningServer(
            directory: try ProductionModeTests.temporaryDirectory("json-logs"),
            environment: [
                "LOG_FORMAT": "json", "COUNTERSIGN_ADMIN_KEY": ProductionModeTests.adminKey,
                "COUNTERSIGN_JOURNEYS_DIR": ProductionModeTests.templates,
            ])
        defer { server.stop() }
        let start = try await exchange(server.url + "/v1/journeys/web_login/start", json: #"{"client_id":"demo-web"}"#)
        let requestID = try #require(start.header("X-Request-Id"))
        let guessed = "guessed-admin-key-0123456789"
        _ = try await server.get("/admin/v1/users", bearer: guessed)

        // Whole lines only: the server may be writing the last one.
        func lines() -> [String] { server.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
        func objects(_ lines: [String]) -> [[String: String]] {
            lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] }
        }
        try await eventually("the security event is logged") { objects(lines()).contains { $0["security_event"] != nil } }
        let text = lines()
        let logged = objects(text)
        #expect(logged.count == text.count, "a line that is not a JSON object of strings: \(text.filter { !$0.hasPrefix("{") })")
        let started = try #require(logged.first { $0["request_id"] == requestID && $0["message"] == "request" })
        #expect(started["route"] == "/v1/journeys/{journeyID}/start")
        #expect(started["method"] == "POST")
        #expect(started["status"] == "200")
        #expect(started["duration_ms"].flatMap(Double.init) != nil)
        #expect(started["time"].flatMap { try? Date($0, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) } != nil)
        #expect(started["level"] == "info")
        #expect(logged.contains { $0["security_event"] == "admin_auth_failed" && $0["level"] == "warning" })
        #expect(!server.output.contains(guessed), "the guessed admin key is not logged")
        #expect(!server.output.contains(ProductionModeTests.adminKey))
    }
}
