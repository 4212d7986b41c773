/// What one call writes, held back and applied in one transaction, and what must wait for that commit
/// (pushes, wake-ups). A refused call applies nothing and wakes no one.
actor UnitOfWork {
    private var writes: [@Sendable (Storage) async throws -> Void] = []
    private var afterCommitActions: [@Sendable () async -> Void] = []

    /// Holds back a write until `apply(on:)`.
    func hold(_ write: @escaping @Sendable (Storage) async throws -> Void) {
        writes.append(write)
    }

    /// Runs `action` once the writes are committed.
    func afterCommit(_ action: @escaping @Sendable () async -> Void) {
        afterCommitActions.append(action)
    }

    /// Applies the held writes, in the order they were made, inside the caller's transaction.
    func apply(on storage: Storage) async throws {
        for write in writes { try await write(storage) }
        writes = []
    }

    /// Runs what waited for the commit, in order.
    func runAfterCommit() async {
        for action in afterCommitActions { await action() }
        afterCommitActions = []
    }

    /// Applies the writes in a transaction of their own, then runs what waited for them.
    func commit(on storage: Storage) async throws {
        try await storage.transaction { transaction in try await self.apply(on: transaction) }
        await runAfterCommit()
    }
}
