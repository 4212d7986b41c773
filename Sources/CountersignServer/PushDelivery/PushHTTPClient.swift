import AsyncHTTPClient
import Vapor

/// The HTTP client push gateways share: HTTP/2 when the provider offers it (APNs requires it), the
/// system's trust unless a configuration brings its own authority, and closed when the server stops.
final class PushHTTPClient: LifecycleHandler, Sendable {
    let client: HTTPClient

    init() {
        var configuration = HTTPClient.Configuration()
        configuration.httpVersion = .automatic
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdownAsync(_ application: Application) async {
        try? await client.shutdown()
    }
}
