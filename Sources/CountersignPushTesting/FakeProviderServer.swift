import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import ServiceLifecycle

/// A Hummingbird server on a free port of 127.0.0.1, speaking TLS with HTTP/2 and HTTP/1.1.
public final class FakeProviderServer: Sendable {
    /// `https://127.0.0.1:PORT`.
    public let url: String
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    private init(url: String, group: ServiceGroup, running: Task<Void, any Error>) {
        self.url = url
        self.group = group
        self.running = running
    }

    /// Starts a server with the routes `routes` adds, and returns once it listens.
    public static func start(
        authority: TestCertificateAuthority, routes: (Router<FakeProviderContext>) throws -> Void
    ) async throws -> FakeProviderServer {
        let router = Router(context: FakeProviderContext.self)
        try routes(router)
        var logger = Logger(label: "fake-provider")
        logger.logLevel = .error
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, server: try .http2Upgrade(tlsConfiguration: authority.serverTLS),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                listening.yield(channel.localAddress?.port ?? 0)
                listening.finish()
            },
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let running = Task { try await group.run() }
        guard let port = await ports.first(where: { _ in true }), port > 0 else {
            running.cancel()
            throw FakeServerDidNotStart()
        }
        return FakeProviderServer(url: "https://127.0.0.1:\(port)", group: group, running: running)
    }

    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await running.value
    }
}

struct FakeServerDidNotStart: Error {}

/// A request's context on a fake provider: which HTTP version carried it, which the real providers check.
public struct FakeProviderContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// 2 on an HTTP/2 stream, 1 on an HTTP/1.1 connection.
    public let httpVersion: Int

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        // An HTTP/2 stream is a child channel of its connection.
        httpVersion = source.channel.parent == nil ? 1 : 2
    }

    public var maxUploadSize: Int { 64 * 1024 }
}

extension Request {
    /// Header names lower-cased, first value of each.
    var headerDictionary: [String: String] {
        Dictionary(headers.map { ($0.name.canonicalName, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// The token of an `Authorization: Bearer …` header.
    var bearerToken: String? {
        guard let value = headers[.authorization], value.lowercased().hasPrefix("bearer ") else { return nil }
        return String(value.dropFirst("bearer ".count))
    }
}
