/// What one call writes, held back and applied in one transaction, and what must wait for that commit
/// (pushes, wake-ups). A refused call applies nothing and wakes no one.
actor UnitOfWork {
    private var writes: [@Sendable (Storage) async throws -> Void] = []
    private var afterCommitActions: [@Sendable () async -> Void] = []
    private var closedApprovals: Set<String> = []

    /// Holds back a write until `commit(on:first:)`.
    func hold(_ write: @escaping @Sendable (Storage) async throws -> Void) {
        writes.append(write)
    }

    /// Whether this call has not closed approval `id` yet; from now on it has. A call closes an approval
    /// once (the last wrong web code fails it; the rejection that follows must not close it again).
    func firstClose(of id: String) -> Bool {
        closedApprovals.insert(id).inserted
    }

    /// Runs `action` once the writes are committed.
    func afterCommit(_ action: @escaping @Sendable () async -> Void) {
        afterCommitActions.append(action)
    }

    /// Commits `first` (the call's own write, such as its interaction's new state) and then the held
    /// writes, in the order they were made, in one transaction; then runs what waited for the commit. A
    /// lone write needs no transaction around it. A held write may itself call `afterCommit` while it runs
    /// (to count only what its statement really changed); that action too waits for the commit.
    func commit(on storage: Storage, first: (@Sendable (Storage) async throws -> Void)? = nil) async throws {
        let held = writes
        writes = []
        if held.isEmpty, let first {
            try await first(storage)
        } else if !held.isEmpty {
            try await storage.transaction { transaction in
                try await first?(transaction)
                for write in held { try await write(transaction) }
            }
        }
        for action in afterCommitActions { await action() }
        afterCommitActions = []
    }
}
