import Foundation
import Metrics
import Prometheus
import Synchronization

/// What the server counts and times, through swift-metrics into a Prometheus registry of this server's
/// own (not the process-wide `MetricsSystem`, so that several servers in one process, as in the tests,
/// keep their figures apart). `GET /metrics` writes the registry out (docs/OPERATIONS.md lists the names).
final class ServerMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    /// Made once: every SQL statement records into it, and a lookup in the registry each time would cost
    /// more than the recording.
    private let databaseQueryTimer: CoreMetrics.Timer
    /// The request metrics of each route seen, made at its first request (the same reason).
    private let requestSeries = Mutex(RequestSeries())

    private struct RequestSeries {
        /// By method, route and status.
        var answered: [[String]: CoreMetrics.Counter] = [:]
        /// By method and route.
        var durations: [[String]: CoreMetrics.Timer] = [:]
    }

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets = [
            Names.httpRequestDuration: Self.buckets(milliseconds: [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000]),
            Names.pushDeliveryDuration: Self.buckets(milliseconds: [10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000]),
            Names.databaseQueryDuration: Self.buckets(milliseconds: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 1000, 5000]),
        ]
        self.factory = factory
        databaseQueryTimer = Timer(label: Names.databaseQueryDuration, factory: factory)
    }

    /// The metric names, following Prometheus' conventions (`_total` counters, `_seconds` durations).
    enum Names {
        static let httpRequests = "countersign_http_requests_total"
        static let httpRequestDuration = "countersign_http_request_duration_seconds"
        static let interactionsStarted = "countersign_interactions_started_total"
        static let interactionsFinished = "countersign_interactions_finished_total"
        static let approvalsCreated = "countersign_approvals_created_total"
        static let approvalsClosed = "countersign_approvals_closed_total"
        static let pushDeliveries = "countersign_push_deliveries_total"
        static let pushDeliveryDuration = "countersign_push_delivery_duration_seconds"
        static let eventStreamsOpen = "countersign_event_streams_open"
        static let inboxWaitsOpen = "countersign_inbox_waits_open"
        static let databaseQueryDuration = "countersign_database_query_duration_seconds"
        static let rateLimited = "countersign_rate_limited_total"
    }

    /// An answered request: `route` is the matched pattern (`/v1/interactions/:interactionID/submit`), so
    /// no id from the path becomes a label.
    func requestAnswered(method: String, route: String, status: UInt, duration: Duration) {
        let factory = factory
        let (counter, timer) = requestSeries.withLock { series in
            let status = String(status)
            let counter = series.answered[[method, route, status]] ?? CoreMetrics.Counter(
                label: Names.httpRequests, dimensions: [("method", method), ("route", route), ("status", status)], factory: factory)
            let timer = series.durations[[method, route]] ?? CoreMetrics.Timer(
                label: Names.httpRequestDuration, dimensions: [("method", method), ("route", route)], factory: factory)
            series.answered[[method, route, status]] = counter
            series.durations[[method, route]] = timer
            return (counter, timer)
        }
        counter.increment()
        timer.recordNanoseconds(duration.nanoseconds)
    }

    func interactionStarted(journey: String) {
        Counter(label: Names.interactionsStarted, dimensions: [("journey", journey)], factory: factory).increment()
    }

    /// A journey that reached its end: `outcome` is the final step without its `action:` prefix
    /// (`success`, `failure`, `rejection`).
    func interactionFinished(journey: String, finalStep: String) {
        let outcome = finalStep.hasPrefix("action:") ? String(finalStep.dropFirst("action:".count)) : finalStep
        Counter(label: Names.interactionsFinished, dimensions: [("journey", journey), ("outcome", outcome)], factory: factory).increment()
    }

    func approvalCreated() {
        Counter(label: Names.approvalsCreated, factory: factory).increment()
    }

    /// An approval closed as `outcome` (an `ApprovalStatus`: approved, denied, cancelled, failed).
    func approvalClosed(outcome: String) {
        Counter(label: Names.approvalsClosed, dimensions: [("outcome", outcome)], factory: factory).increment()
    }

    /// One push attempt through `provider` (apns, fcm, inbox) and what became of it (a `DeliveryStatus`),
    /// with how long the provider took; nil for the inbox, which is delivered as it is saved.
    func pushAttempted(provider: String, outcome: String, duration: Duration?) {
        Counter(label: Names.pushDeliveries, dimensions: [("provider", provider), ("outcome", outcome)], factory: factory).increment()
        guard let duration else { return }
        Timer(label: Names.pushDeliveryDuration, dimensions: [("provider", provider)], factory: factory)
            .recordNanoseconds(duration.nanoseconds)
    }

    func databaseQueried(duration: Duration) {
        databaseQueryTimer.recordNanoseconds(duration.nanoseconds)
    }

    /// A request refused by a limit; `code` is its wire code (`rate_limited`, `slow_down`, `too_many_waits`).
    func rateLimited(code: String) {
        Counter(label: Names.rateLimited, dimensions: [("code", code)], factory: factory).increment()
    }

    /// The registry in Prometheus' text format, with the requests held open right now.
    func exposition(eventStreamsOpen: Int, inboxWaitsOpen: Int) -> String {
        Gauge(label: Names.eventStreamsOpen, factory: factory).record(eventStreamsOpen)
        Gauge(label: Names.inboxWaitsOpen, factory: factory).record(inboxWaitsOpen)
        return registry.emitToString()
    }

    private static func buckets(milliseconds: [Double]) -> [Duration] {
        milliseconds.map { .nanoseconds(Int64($0 * 1_000_000)) }
    }
}

extension Duration {
    /// The whole duration in nanoseconds.
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
