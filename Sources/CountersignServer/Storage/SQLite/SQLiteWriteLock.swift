import NIOCore
import Synchronization

/// The one writer connection of the SQLite database: a task holds it for one statement (a write, or a
/// read that found it free), or for a whole transaction across its awaits. A free lock is taken at once,
/// on the caller's thread; waiting tasks are suspended (no thread is held, nothing spins) and served in
/// order.
final class SQLiteWriteLock: Sendable {
    private struct State {
        var held = false
        var waiting = CircularBuffer<CheckedContinuation<Void, Never>>()
    }

    private let state = Mutex(State())

    func withLock<T>(_ body: () async throws -> T) async throws -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    /// Runs `body` holding the lock if nobody holds it now; returns nil, without waiting, if somebody does.
    func ifFree<T>(_ body: () throws -> T) rethrows -> T? {
        guard tryAcquire() else { return nil }
        defer { release() }
        return try body()
    }

    private func tryAcquire() -> Bool {
        state.withLock { state in
            if state.held { return false }
            state.held = true
            return true
        }
    }

    private func acquire() async {
        if tryAcquire() { return }
        await withCheckedContinuation { continuation in
            let acquired = state.withLock { state in
                if state.held {
                    state.waiting.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    /// Hands the lock to the longest waiting task, or frees it.
    private func release() {
        let next = state.withLock { state in
            let next = state.waiting.popFirst()
            if next == nil { state.held = false }
            return next
        }
        next?.resume()
    }
}
