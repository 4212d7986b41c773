/// A statement to run: SQL written once, as a constant, and the values bound to it.
///
/// The SQL uses PostgreSQL's numbered parameters, `$1`, `$2`…, each first used in that order (SQLite reads
/// them as parameters named so, and numbers them in the order they first appear). The same text runs on
/// both databases, where each prepares it once per connection and then only binds and runs it.
struct BoundStatement: Sendable {
    let sql: String
    let binds: [SQLValue]

    init(_ sql: String, _ binds: any SQLBindable...) {
        self.init(sql, binds: binds.map(\.sqlValue))
    }

    init(_ sql: String, binds: [SQLValue]) {
        self.sql = sql
        self.binds = binds
    }
}

/// Which database a statement runs on, for the few statements whose SQL differs.
enum DatabaseKind: Sendable {
    case sqlite
    case postgresql
}

/// Where statements run: a connection of either database, inside a transaction or not.
protocol SQLExecutor: Sendable {
    var database: DatabaseKind { get }
    /// Runs `statement`, handing each row it answers to `onRow`.
    func execute(_ statement: BoundStatement, _ onRow: @escaping @Sendable (DatabaseRow) -> Void) async throws
}

extension SQLExecutor {
    func run(_ statement: BoundStatement) async throws {
        try await execute(statement) { _ in }
    }

    func all(_ statement: BoundStatement) async throws -> [DatabaseRow] {
        let rows = RowCollector()
        try await execute(statement) { rows.append($0) }
        return rows.rows
    }

    func first(_ statement: BoundStatement) async throws -> DatabaseRow? {
        try await all(statement).first
    }

    func all<Record: RowDecodable>(_ type: Record.Type, _ statement: BoundStatement) async throws -> [Record] {
        try await all(statement).map { try Record(row: $0) }
    }

    func first<Record: RowDecodable>(_ type: Record.Type, _ statement: BoundStatement) async throws -> Record? {
        try await first(statement).map { try Record(row: $0) }
    }

    func run(_ sql: String, _ binds: any SQLBindable...) async throws {
        try await run(BoundStatement(sql, binds: binds.map(\.sqlValue)))
    }

    func all(_ sql: String, _ binds: any SQLBindable...) async throws -> [DatabaseRow] {
        try await all(BoundStatement(sql, binds: binds.map(\.sqlValue)))
    }

    func first(_ sql: String, _ binds: any SQLBindable...) async throws -> DatabaseRow? {
        try await first(BoundStatement(sql, binds: binds.map(\.sqlValue)))
    }

    func all<Record: RowDecodable>(_ type: Record.Type, _ sql: String, _ binds: any SQLBindable...) async throws -> [Record] {
        try await all(type, BoundStatement(sql, binds: binds.map(\.sqlValue)))
    }

    func first<Record: RowDecodable>(_ type: Record.Type, _ sql: String, _ binds: any SQLBindable...) async throws -> Record? {
        try await first(type, BoundStatement(sql, binds: binds.map(\.sqlValue)))
    }
}

/// The rows a statement answers, gathered as its executor hands them over (on the calling task, one
/// after another, before `execute` returns).
private final class RowCollector: @unchecked Sendable {
    var rows: [DatabaseRow] = []
    func append(_ row: DatabaseRow) { rows.append(row) }
}
