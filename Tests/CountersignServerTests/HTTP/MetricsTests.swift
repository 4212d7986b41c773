import CountersignCore
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@Suite("Prometheus metrics at /metrics")
struct MetricsTests {
    @Test("after a web sign-in approved on the phone, the request, interaction, approval, push, database and limit figures moved")
    func countersMoveWithAFlow() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let before = try await server.scrapeMetrics()
            #expect(before.value("countersign_interactions_started_total", ["journey": "web_login_biometric_only"]) == nil)
            #expect(before.value("countersign_http_requests_total", [
                "method": "POST", "route": "/v1/journeys/{journeyID}/start", "status": "200",
            ]) == 1, "the phone's registration")

            // Held requests are read when scraped: the phone's long-poll, then the browser's events stream.
            let longPoll = Task { try await phone.inbox(wait: 30) }
            try await eventually("the phone's long-poll is held") { try await server.stats()["inbox_waits_open"] == 1 }
            #expect(try await server.scrapeMetrics().value("countersign_inbox_waits_open", [:]) == 1)
            let (id, token) = try await server.waitingWebLogin(email: "ada@example.com")
            #expect(try await longPoll.value.count == 1, "the sign-in woke the long-poll")
            let stream = try await server.openHeldEventsStream(id, token: token)
            #expect(try await server.scrapeMetrics().value("countersign_event_streams_open", [:]) == 1)
            let tooFast = try await server.send(.POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": [:]], bearer: token)
            #expect(tooFast.status == .tooManyRequests)
            try await phone.approve()
            #expect(try await stream.value.body.string.contains("approved"))
            server.clock.advance(by: 3)
            let resumed = try await server.send(.POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": [:]], bearer: token)
            #expect(resumed.body["journey_step_id"] == .string(JourneyStepID.success))

            let after = try await server.scrapeMetrics()
            let start = ["method": "POST", "route": "/v1/journeys/{journeyID}/start"]
            #expect(after.value("countersign_http_requests_total", start.merging(["status": "200"]) { $1 }) == 2)
            #expect(after.value("countersign_http_request_duration_seconds_count", start) == 2)
            #expect(after.value("countersign_http_requests_total", [
                "method": "POST", "route": "/v1/interactions/{interactionID}/submit", "status": "429",
            ]) == 1)
            #expect(after.value("countersign_rate_limited_total", ["code": "slow_down"]) == 1)
            #expect(after.value("countersign_interactions_started_total", ["journey": "web_login_biometric_only"]) == 1)
            #expect(after.value("countersign_interactions_finished_total", ["journey": "web_login_biometric_only", "outcome": "success"]) == 1)
            #expect(after.value("countersign_interactions_finished_total", ["journey": "mobile_approve", "outcome": "success"]) == 1)
            #expect(after.value("countersign_approvals_created_total", [:]) == 1)
            #expect(after.value("countersign_approvals_closed_total", ["outcome": "approved"]) == 1)
            #expect(after.value("countersign_push_deliveries_total", ["provider": "inbox", "outcome": "delivered"]) == 1)
            #expect((after.value("countersign_database_query_duration_seconds_count", [:]) ?? 0) > (before.value("countersign_database_query_duration_seconds_count", [:]) ?? 0))
            #expect(after.value("countersign_event_streams_open", [:]) == 0)
            #expect(after.value("countersign_inbox_waits_open", [:]) == 0)
        }
    }

    @Test("a push through APNs is counted by provider and outcome, with the time the provider took")
    func pushThroughAProvider() async throws {
        try await FakePushProviders.withPhone(on: "apns") { providers, server, phone in
            _ = try await TestBrowser(server).signIn(email: "ada@example.com")
            try await eventually("Apple received the push") { providers.apns.requests.count == 1 }
            try await eventually("the attempt is counted") {
                try await server.scrapeMetrics().value("countersign_push_deliveries_total", ["provider": "apns", "outcome": "delivered"]) == 1
            }
            #expect(try await server.scrapeMetrics().value("countersign_push_delivery_duration_seconds_count", ["provider": "apns"]) == 1)
        }
    }

    @Test("with COUNTERSIGN_METRICS_TOKEN set, a scraper without the token, or with another, gets 401 and no figures")
    func tokenProtects() async throws {
        let token = "scrape-token-0123456789"
        try await TestServer.run(adjust: { $0.metricsToken = token }) { server in
            for bearer in [nil, "scrape-token-9876543210"] {
                let refused = try await server.request(.GET, "/metrics", headers: bearer.map { ["Authorization": "Bearer \($0)"] } ?? [:])
                #expect(refused.status == .unauthorized)
                #expect(!refused.body.string.contains("countersign_"))
            }
            let scraped = try await server.scrapeMetrics(bearer: token)
            #expect(scraped.value("countersign_http_requests_total", ["method": "GET", "route": "/metrics", "status": "401"]) == 2)
        }
    }
}

extension MetricsTests {
    @Test("a production server without COUNTERSIGN_METRICS_TOKEN does not serve the metrics, which tell which emails reached a phone; with one, a scraper holding it reads them")
    func productionNeedsAToken() async throws {
        try await TestServer.run(adjust: { $0.mode = .production }) { (server: TestServer) async throws in
            _ = try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web"])
            let unserved = try await server.request(.GET, "/metrics")
            #expect(unserved.status == .notFound)
            #expect(!unserved.body.string.contains("countersign_"))
        }
        let token = "scrape-token-0123456789"
        try await TestServer.run(adjust: { $0.mode = .production; $0.metricsToken = token }) { (server: TestServer) async throws in
            #expect(try await server.request(.GET, "/metrics").status == .unauthorized)
            #expect(try await server.scrapeMetrics(bearer: token).value("countersign_http_requests_total", ["method": "GET", "route": "/metrics", "status": "401"]) == 1)
        }
    }
}

extension TestServer {
    /// `GET /metrics`, checked to be Prometheus' text format, parsed.
    func scrapeMetrics(bearer: String? = nil) async throws -> MetricsExposition {
        let response = try await request(.GET, "/metrics", headers: bearer.map { ["Authorization": "Bearer \($0)"] } ?? [:])
        #expect(response.status == .ok)
        #expect(response.headers.first(name: .contentType)?.hasPrefix("text/plain; version=0.0.4") == true)
        return MetricsExposition(response.body.string)
    }
}

/// The samples of a Prometheus text exposition: name, labels and value.
struct MetricsExposition {
    private var samples: [(name: String, labels: [String: String], value: Double)] = []

    init(_ text: String) {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            var labels: [String: String] = [:]
            var name = String(series)
            if let brace = series.firstIndex(of: "{") {
                name = String(series[..<brace])
                let inside = series[series.index(after: brace)..<series.index(before: series.endIndex)]
                for pair in inside.split(separator: ",") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2 else { continue }
                    labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
                }
            }
            samples.append((name, labels, value))
        }
    }

    /// The value of the series `name` with exactly `labels`; nil when there is none.
    func value(_ name: String, _ labels: [String: String]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }
}
