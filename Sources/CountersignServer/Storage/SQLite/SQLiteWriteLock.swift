/// The one writer of the SQLite database: a task holds it for one statement, or for a whole transaction
/// across its awaits. Waiting tasks are suspended (no thread is held, nothing spins) and served in order.
actor SQLiteWriteLock {
    private var held = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func withLock<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            held = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
