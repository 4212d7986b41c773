import CountersignCore
import HTTPTypes
import Hummingbird

/// `GET /metrics`: the server's metrics in Prometheus' text format. With `COUNTERSIGN_METRICS_TOKEN` set,
/// only a scraper sending it as a bearer token gets them. Without one they are served in development mode
/// only: the figures tell which sign-ins reached a phone (an email with no phone gets a decoy, which
/// pushes nothing), so a production server without a token does not serve them at all.
struct MetricsRoutes: RouteGroup {
    let metrics: ServerMetrics
    let openWaits: OpenWaits
    /// SHA-256 (hex) of the token a scraper must send, when one is configured.
    let tokenDigest: String?
    /// Whether the metrics are served when no token is configured.
    let servedWithoutToken: Bool

    init(metrics: ServerMetrics, openWaits: OpenWaits, token: String?, servedWithoutToken: Bool) {
        self.metrics = metrics
        self.openWaits = openWaits
        tokenDigest = token.map(SecretDigest.hex)
        self.servedWithoutToken = servedWithoutToken
    }

    func register(on router: Router<ServerRequestContext>) {
        guard tokenDigest != nil || servedWithoutToken else { return }
        router.get("metrics") { request, _ in try await scrape(request) }
    }

    private func scrape(_ request: Request) async throws -> Response {
        if let tokenDigest {
            guard let given = request.bearerToken, SecretDigest.matches(given, storedHex: tokenDigest) else {
                throw ServiceError(.unauthenticated, ErrorCode.invalidToken, "A bearer token is required to read the metrics.")
            }
        }
        let text = metrics.exposition(eventStreamsOpen: await openWaits.eventStreams, inboxWaitsOpen: await openWaits.inboxWaits)
        let headers: HTTPFields = [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"]
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
