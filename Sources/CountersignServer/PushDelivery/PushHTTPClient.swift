import AsyncHTTPClient

/// The HTTP client push gateways and CIBA's ping notifications share: HTTP/2 when the other end offers it
/// (APNs requires it), the system's trust unless a configuration brings its own authority, no redirects
/// (Apple and Google send none; one followed would take a request, and its credentials, where the
/// configuration does not say), and closed when the server stops.
final class PushHTTPClient: ServerLifecycle {
    let client: HTTPClient

    init() {
        var configuration = HTTPClient.Configuration()
        configuration.httpVersion = .automatic
        configuration.redirectConfiguration = .disallow
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async {
        try? await client.shutdown()
    }
}
