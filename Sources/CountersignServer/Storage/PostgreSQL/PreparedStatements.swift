import Logging
import PostgresKit
import PostgresNIO
import SQLKit
import Synchronization

/// Gives each SQL text the stores send a statement name, so that PostgreSQL parses and plans it once per
/// connection and then only binds and executes it (PostgresNIO prepares a named statement on a
/// connection the first time it runs there).
///
/// A table changed under running statements (another instance's migration) can make PostgreSQL refuse a
/// prepared `SELECT *` whose columns changed; that text then gets a new name, prepared afresh, and the
/// statement is tried once more when no transaction has failed with it.
final class PreparedStatements: Sendable {
    /// Beyond this many texts (statements whose text varies with the number of values bound), statements
    /// run unprepared rather than filling every connection with one-off statements.
    static let limit = 512

    private struct Names {
        var byText: [String: String] = [:]
        var issued = 0
    }

    private let names = Mutex(Names())

    func run(
        _ sql: String, _ bindings: PostgresBindings, on connection: PostgresConnection, inTransaction: Bool, logger: Logger,
        _ onRow: (any SQLRow) -> Void
    ) async throws {
        guard let name = name(for: sql) else {
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger) {
                onRow(row.sql())
            }
            return
        }
        do {
            try await execute(NamedStatement.Text(name: name, sql: sql), bindings, on: connection, logger: logger, onRow)
        } catch let error as PSQLError where Self.isStalePlan(error) {
            let renamed = rename(sql)
            if inTransaction { throw error }
            try await execute(NamedStatement.Text(name: renamed, sql: sql), bindings, on: connection, logger: logger, onRow)
        }
    }

    private func execute(
        _ text: NamedStatement.Text, _ bindings: PostgresBindings, on connection: PostgresConnection, logger: Logger,
        _ onRow: (any SQLRow) -> Void
    ) async throws {
        let rows = try await NamedStatement.$text.withValue(text) {
            try await connection.execute(NamedStatement(bindings: bindings), logger: logger)
        }
        for try await row in rows { onRow(row.sql()) }
    }

    /// The statement name of `sql`, given on first use; nil once `limit` texts have names.
    private func name(for sql: String) -> String? {
        names.withLock { names in
            if let name = names.byText[sql] { return name }
            guard names.byText.count < Self.limit else { return nil }
            return Self.issue(for: sql, in: &names)
        }
    }

    /// A new name for `sql`, after its prepared statement went stale.
    private func rename(_ sql: String) -> String {
        names.withLock { Self.issue(for: sql, in: &$0) }
    }

    private static func issue(for sql: String, in names: inout Names) -> String {
        names.issued += 1
        let name = "countersign_\(names.issued)"
        names.byText[sql] = name
        return name
    }

    /// PostgreSQL's "cached plan must not change result type" (SQLSTATE 0A000, feature not supported).
    private static func isStalePlan(_ error: PSQLError) -> Bool {
        error.code == .server && error.serverInfo?[.sqlState] == "0A000"
    }
}

/// PostgresNIO's prepared statement, whose name and text are the type's own (`static`). The text of one
/// execution is set for the call's task around `execute`, which reads both there, before it returns.
private struct NamedStatement: PostgresPreparedStatement {
    struct Text: Sendable {
        let name: String
        let sql: String
    }

    @TaskLocal static var text = Text(name: "", sql: "")

    static var name: String { text.name }
    static var sql: String { text.sql }

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}
