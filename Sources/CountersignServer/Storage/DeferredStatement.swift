/// One statement of a call's writes, built when the call decides on it and run at the call's commit
/// (`UnitOfWork`). Being a statement rather than code, it can travel with the call's other statements:
/// on PostgreSQL a call whose writes are all statements commits them as one statement, in one round trip
/// (`Storage.commit(_:)`).
///
/// What it changed is its outcome: a compare-and-set that changed no row can refuse the whole call, and
/// the call can be told, once it committed, whether the statement changed its row.
struct DeferredStatement: Sendable {
    let query: BoundStatement
    /// Whether `query` ends in `RETURNING`, answering a row for each row it changed. One that does not
    /// (an insert) either changes its row or fails.
    let answersChangedRows: Bool
    /// The one row it changes, by table and key, when a call may hold another statement on that row:
    /// such statements run one after another, never as one (`Storage.commit(_:)`).
    let row: String?
    /// The error that refuses the call when the statement changed no row; read after the call's writes
    /// were rolled back.
    private(set) var refusal: (@Sendable (Storage) async throws -> any Error)?
    /// Told whether the statement changed a row, once the call's writes are committed.
    private(set) var outcome: (@Sendable (_ changed: Bool) async -> Void)?

    /// A statement that changes its rows or fails.
    init(_ query: BoundStatement) {
        self.query = query
        answersChangedRows = false
        row = nil
    }

    /// A statement ending in `RETURNING`, so that what it changed is known; `row` names the one row it
    /// changes when the call may hold another statement on it.
    init(returningChangedRows query: BoundStatement, row: String? = nil) {
        self.query = query
        answersChangedRows = true
        self.row = row
    }

    /// This statement refusing the whole call with `error` when it changes no row.
    func refusing(with error: @escaping @Sendable (Storage) async throws -> any Error) -> DeferredStatement {
        precondition(answersChangedRows, "only a statement that answers its changed rows can refuse")
        var statement = self
        statement.refusal = error
        return statement
    }

    /// This statement telling `outcome` whether it changed a row, once committed.
    func telling(_ outcome: @escaping @Sendable (_ changed: Bool) async -> Void) -> DeferredStatement {
        precondition(answersChangedRows, "only a statement that answers its changed rows can tell")
        var statement = self
        statement.outcome = outcome
        return statement
    }
}

/// A deferred statement that must change a row changed none: the call's writes are rolled back, and the
/// statement's `refusal` says why.
struct DeferredStatementRefused: Error {
    let refusal: @Sendable (Storage) async throws -> any Error
}

extension SQLExecutor {
    /// Runs `statement` alone; returns whether it changed a row, or throws `DeferredStatementRefused`.
    func run(_ statement: DeferredStatement) async throws -> Bool {
        guard statement.answersChangedRows else {
            try await run(statement.query)
            return true
        }
        let changed = try await !all(statement.query).isEmpty
        if !changed, let refusal = statement.refusal { throw DeferredStatementRefused(refusal: refusal) }
        return changed
    }
}
