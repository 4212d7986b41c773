import Synchronization

/// Work that runs for as long as the server does: started once at boot, cancelled and awaited at
/// shutdown (the push sender's loop, the expiry sweep).
final class ServerLifetimeTask: Sendable {
    private let running = Mutex<Task<Void, Never>?>(nil)

    /// Starts `body` unless it already runs.
    func start(_ body: @escaping @Sendable () async -> Void) {
        running.withLock { task in
            guard task == nil else { return }
            task = Task { await body() }
        }
    }

    /// Cancels the work, calls `wake` so a loop waiting for an event notices, and returns once it ended.
    func stop(wake: @Sendable () async -> Void = {}) async {
        guard let task = running.withLock({ $0 }) else { return }
        task.cancel()
        await wake()
        await task.value
    }
}
