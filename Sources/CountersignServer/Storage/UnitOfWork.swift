/// What one call writes, held back and applied in one transaction, and what must wait for that commit
/// (pushes, wake-ups). A refused call applies nothing and wakes no one.
actor UnitOfWork {
    private var writes: [DeferredWrite] = []
    private var afterCommitActions: [@Sendable () async -> Void] = []
    private var closedApprovals: Set<String> = []

    /// Holds back a statement until `commit(on:first:)`.
    func hold(_ statement: DeferredStatement) {
        writes.append(.statement(statement))
    }

    /// Holds back a write given as code (several statements, or one whose outcome decides more than a
    /// `DeferredStatement` can say) until `commit(on:first:)`. A call with code among its writes commits them
    /// in a transaction, one statement after another.
    func hold(_ write: @escaping @Sendable (Storage) async throws -> Void) {
        writes.append(.code(write))
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

    /// Commits `first` (the call's own write, such as its interaction's new state) and the held writes, in
    /// the order they were made, in one transaction (`Storage.commit(_:)`); then runs what
    /// waited for the commit. A held write may itself call `afterCommit` while it runs, and a held
    /// statement when it is told its outcome (to act only on what its statement really changed); that
    /// action too waits for the commit.
    func commit(on storage: Storage, first: DeferredStatement? = nil) async throws {
        let held = (first.map { [DeferredWrite.statement($0)] } ?? []) + writes
        writes = []
        try await storage.commit(held)
        for action in afterCommitActions { await action() }
        afterCommitActions = []
    }
}

/// One write a call holds until its commit: a statement, or code that runs several.
enum DeferredWrite: Sendable {
    case statement(DeferredStatement)
    case code(@Sendable (Storage) async throws -> Void)

    var statement: DeferredStatement? {
        if case .statement(let statement) = self { statement } else { nil }
    }
}
