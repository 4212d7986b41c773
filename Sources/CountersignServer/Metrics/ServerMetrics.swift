import Foundation
import Metrics
import Prometheus
import Synchronization

/// What the server counts and times, through swift-metrics into a Prometheus registry of this server's
/// own (not the process-wide `MetricsSystem`, so that several servers in one process, as in the tests,
/// keep their figures apart). `GET /metrics` writes the registry out (docs/API.md lists the names).
final class ServerMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    /// Each series once made, by name and label values: the registry's own lookup, made on every record,
    /// would cost more than the recording (every request and every SQL statement records).
    private let made = Mutex(Series())
    /// The series without labels, made once here (each SQL statement records one).
    private let approvalsCreated: CoreMetrics.Counter
    private let decoyApprovalsCreated: CoreMetrics.Counter
    private let databaseQueries: CoreMetrics.Timer

    private struct Series {
        var counters: [[String]: CoreMetrics.Counter] = [:]
        var timers: [[String]: CoreMetrics.Timer] = [:]
    }

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets = [
            Names.httpRequestDuration: Self.buckets(milliseconds: [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000]),
            Names.pushDeliveryDuration: Self.buckets(milliseconds: [10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000]),
            Names.databaseQueryDuration: Self.buckets(milliseconds: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 1000, 5000]),
        ]
        self.factory = factory
        approvalsCreated = CoreMetrics.Counter(label: Names.approvalsCreated, dimensions: [], factory: factory)
        decoyApprovalsCreated = CoreMetrics.Counter(label: Names.decoyApprovalsCreated, dimensions: [], factory: factory)
        databaseQueries = CoreMetrics.Timer(label: Names.databaseQueryDuration, dimensions: [], factory: factory)
    }

    /// The metric names, following Prometheus' conventions (`_total` counters, `_seconds` durations).
    enum Names {
        static let httpRequests = "countersign_http_requests_total"
        static let httpRequestDuration = "countersign_http_request_duration_seconds"
        static let interactionsStarted = "countersign_interactions_started_total"
        static let interactionsFinished = "countersign_interactions_finished_total"
        static let approvalsCreated = "countersign_approvals_created_total"
        static let approvalsClosed = "countersign_approvals_closed_total"
        static let decoyApprovalsCreated = "countersign_decoy_approvals_created_total"
        static let pushDeliveries = "countersign_push_deliveries_total"
        static let pushDeliveryDuration = "countersign_push_delivery_duration_seconds"
        static let eventStreamsOpen = "countersign_event_streams_open"
        static let inboxWaitsOpen = "countersign_inbox_waits_open"
        static let databaseQueryDuration = "countersign_database_query_duration_seconds"
        static let rateLimited = "countersign_rate_limited_total"
        static let cibaRequests = "countersign_ciba_requests_total"
        static let cibaPings = "countersign_ciba_pings_total"
    }

    /// An answered request: `route` is the matched pattern (`/v1/interactions/{interactionID}/submit`), so
    /// no id from the path becomes a label.
    func requestAnswered(method: String, route: String, status: UInt, duration: Duration) {
        counter(Names.httpRequests, [("method", method), ("route", route), ("status", String(status))]).increment()
        timer(Names.httpRequestDuration, [("method", method), ("route", route)]).recordNanoseconds(duration.nanoseconds)
    }

    func interactionStarted(journey: String) {
        counter(Names.interactionsStarted, [("journey", journey)]).increment()
    }

    /// A journey that reached its end: `outcome` is the final step without its `action:` prefix
    /// (`success`, `failure`, `rejection`).
    func interactionFinished(journey: String, finalStep: String) {
        let outcome = finalStep.hasPrefix("action:") ? String(finalStep.dropFirst("action:".count)) : finalStep
        counter(Names.interactionsFinished, [("journey", journey), ("outcome", outcome)]).increment()
    }

    func approvalCreated() {
        approvalsCreated.increment()
    }

    /// A decoy created for an identifier with no phone: many of them are someone trying emails.
    func decoyApprovalCreated() {
        decoyApprovalsCreated.increment()
    }

    /// An approval closed as `outcome` (an `ApprovalStatus`: approved, denied, cancelled, failed).
    func approvalClosed(outcome: String) {
        counter(Names.approvalsClosed, [("outcome", outcome)]).increment()
    }

    /// One push attempt through `provider` (apns, fcm, inbox) and what became of it (a `DeliveryStatus`),
    /// with how long the provider took; nil for the inbox, which is delivered as it is saved.
    func pushAttempted(provider: String, outcome: String, duration: Duration?) {
        counter(Names.pushDeliveries, [("provider", provider), ("outcome", outcome)]).increment()
        guard let duration else { return }
        timer(Names.pushDeliveryDuration, [("provider", provider)]).recordNanoseconds(duration.nanoseconds)
    }

    func databaseQueried(duration: Duration) {
        databaseQueries.recordNanoseconds(duration.nanoseconds)
    }

    /// A call at an OpenID CIBA endpoint (`backchannel` or `token`) and how it ended: `accepted`, `issued`,
    /// or the OAuth error it was refused with.
    func cibaRequest(endpoint: String, outcome: String) {
        counter(Names.cibaRequests, [("endpoint", endpoint), ("outcome", outcome)]).increment()
    }

    /// A ping notification attempt and what became of it: `delivered`, `retry_scheduled`, `gave_up`.
    func cibaPinged(outcome: String) {
        counter(Names.cibaPings, [("outcome", outcome)]).increment()
    }

    /// A request refused by a limit; `code` is its wire code (`rate_limited`, `slow_down`, `too_many_waits`).
    func rateLimited(code: String) {
        counter(Names.rateLimited, [("code", code)]).increment()
    }

    /// The registry in Prometheus' text format, with the requests held open right now.
    func exposition(eventStreamsOpen: Int, inboxWaitsOpen: Int) -> String {
        Gauge(label: Names.eventStreamsOpen, factory: factory).record(eventStreamsOpen)
        Gauge(label: Names.inboxWaitsOpen, factory: factory).record(inboxWaitsOpen)
        return registry.emitToString()
    }

    private func counter(_ name: String, _ labels: [(String, String)]) -> CoreMetrics.Counter {
        series(\.counters, name, labels) { CoreMetrics.Counter(label: $0, dimensions: $1, factory: $2) }
    }

    private func timer(_ name: String, _ labels: [(String, String)]) -> CoreMetrics.Timer {
        series(\.timers, name, labels) { CoreMetrics.Timer(label: $0, dimensions: $1, factory: $2) }
    }

    /// The series `name` with `labels`, made on first use.
    private func series<Metric: Sendable>(
        _ kind: WritableKeyPath<Series, [[String]: Metric]>, _ name: String, _ labels: [(String, String)],
        make: (String, [(String, String)], PrometheusMetricsFactory) -> Metric
    ) -> Metric {
        let key = [name] + labels.map(\.1)
        let factory = factory
        return made.withLock { made in
            if let existing = made[keyPath: kind][key] { return existing }
            let metric = make(name, labels, factory)
            made[keyPath: kind][key] = metric
            return metric
        }
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
