import AsyncHTTPClient
import NIOSSL
import Vapor

/// The HTTP client push gateways share: HTTP/2 when the provider offers it (APNs requires it), and
/// closed when the server stops.
final class PushHTTPClient: LifecycleHandler, Sendable {
    let client: HTTPClient

    /// `trustRoots`: certificate authorities to trust instead of the system's (test servers); empty for
    /// the system's.
    init(trustRoots: [NIOSSLCertificate]) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if !trustRoots.isEmpty { tls.trustRoots = .certificates(trustRoots) }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdownAsync(_ application: Application) async {
        try? await client.shutdown()
    }
}
