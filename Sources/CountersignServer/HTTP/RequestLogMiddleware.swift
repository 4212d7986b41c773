import Vapor

/// One log line per request once it is answered: method, route (the matched pattern, so no ids or
/// secrets from the path), status and duration, under the request's id; the id is also sent back as
/// `X-Request-Id`, so a client's report can be matched to the server's line. The same figures go to the
/// request metrics.
struct RequestLogMiddleware: AsyncMiddleware {
    let metrics: ServerMetrics

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next.respond(to: request)
        let elapsed = started.duration(to: .now)
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let route = request.route.map { "/" + $0.path.map(\.description).joined(separator: "/") } ?? "(no route)"
        request.logger.info("request", metadata: [
            "method": "\(request.method.rawValue)", "route": "\(route)", "status": "\(response.status.code)",
            "duration_ms": "\(String(format: "%.1f", milliseconds))",
        ])
        metrics.requestAnswered(method: request.method.rawValue, route: route, status: response.status.code, duration: elapsed)
        response.headers.replaceOrAdd(name: "X-Request-Id", value: request.id)
        return response
    }
}
