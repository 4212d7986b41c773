import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// Runs `services` while `body` runs: started before it (each service's `run` entered), shut down
/// gracefully after it, whether it returns or throws.
func withServices<T>(_ services: [any Service], logger: Logger, _ body: () async throws -> T) async throws -> T {
    let (started, signal) = AsyncStream.makeStream(of: Void.self)
    let group = ServiceGroup(configuration: .init(services: services + [StartedSignal(signal: signal)], logger: logger))
    let running = Task { try await group.run() }
    for await _ in started { break }
    do {
        let result = try await body()
        await group.triggerGracefulShutdown()
        try await running.value
        return result
    } catch {
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        throw error
    }
}

/// The last service of a group: says the group has started, then waits for the shutdown.
private struct StartedSignal: Service {
    let signal: AsyncStream<Void>.Continuation

    func run() async throws {
        signal.yield()
        signal.finish()
        try? await gracefulShutdown()
    }
}

extension ByteBuffer {
    /// The bytes as UTF-8 text.
    var string: String { String(buffer: self) }
}

extension HTTPHeaders {
    /// The first value of the header `name`.
    func first(name: HTTPField.Name) -> String? {
        first(name: name.canonicalName)
    }

    /// The `Content-Type` as sent.
    var contentType: String? { first(name: "Content-Type") }
}
