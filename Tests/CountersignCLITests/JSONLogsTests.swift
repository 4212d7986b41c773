import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("LOG_FORMAT=json")
struct JSONLogsTests {
    @Test("every line is one JSON object; a request's line has its id (also sent as X-Request-Id), route, status and duration; a security event its name")
    func linesAnOperatorCanParse() async throws {
        let server = try RunningServer(
            directory: try ProductionModeTests.temporaryDirectory("json-logs"),
            environment: [
                "LOG_FORMAT": "json", "COUNTERSIGN_ADMIN_KEY": ProductionModeTests.adminKey,
                "COUNTERSIGN_JOURNEYS_DIR": ProductionModeTests.templates,
            ])
        defer { server.stop() }
        var start = URLRequest(url: URL(string: server.url + "/v1/journeys/web_login/start")!)
        start.httpMethod = "POST"
        start.setValue("application/json", forHTTPHeaderField: "Content-Type")
        start.httpBody = Data(#"{"client_id":"demo-web"}"#.utf8)
        let (_, response) = try await URLSession.shared.data(for: start)
        let requestID = try #require((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Request-Id"))
        let guessed = "guessed-admin-key-0123456789"
        _ = try await server.get("/admin/v1/users", bearer: guessed)

        var lines: [[String: String]] = []
        for _ in 0..<100 {
            let text = server.output.split(separator: "\n").map(String.init)
            lines = text.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] }
            #expect(lines.count == text.count, "a line that is not a JSON object of strings: \(text.filter { !$0.hasPrefix("{") })")
            if lines.contains(where: { $0["security_event"] != nil }) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let started = try #require(lines.first { $0["request_id"] == requestID && $0["message"] == "request" })
        #expect(started["route"] == "/v1/journeys/:journeyID/start")
        #expect(started["method"] == "POST")
        #expect(started["status"] == "200")
        #expect(started["duration_ms"].flatMap(Double.init) != nil)
        #expect(started["time"].flatMap { try? Date($0, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) } != nil)
        #expect(started["level"] == "info")
        #expect(lines.contains { $0["security_event"] == "admin_auth_failed" && $0["level"] == "warning" })
        #expect(!server.output.contains(guessed), "the guessed admin key is not logged")
        #expect(!server.output.contains(ProductionModeTests.adminKey))
    }
}
