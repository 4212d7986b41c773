import CountersignServer
import Hummingbird
import NIOCore
import ServiceLifecycle
import Testing

extension TestServer {
    /// Runs `body` with this server's routes also served over HTTP on a free loopback port (with the
    /// configured idle timeout), and stops that listener afterwards whether `body` returns or throws.
    func listening<T>(_ body: (_ port: Int) async throws -> T) async throws -> T {
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let listener = Application(
            responder: app.responder, server: app.httpServer, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                listening.yield(channel.localAddress?.port ?? 0)
                listening.finish()
            },
            logger: app.logger)
        return try await withServices([listener], logger: app.logger) {
            let port = try #require(await ports.first { _ in true })
            return try await body(port)
        }
    }
}
