import Testing
import Vapor

extension Application {
    /// Runs `body` with this application's HTTP server listening on a free loopback port, and stops the
    /// server afterwards whether `body` returns or throws. (A server left running when the application
    /// shuts down fails Vapor's assertion and takes the whole test process with it, hiding the failure.)
    func listening<T>(_ body: (_ port: Int) async throws -> T) async throws -> T {
        try await server.start(address: .hostname("127.0.0.1", port: 0))
        do {
            let port = try #require(http.server.shared.localAddress?.port)
            let result = try await body(port)
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }
}
