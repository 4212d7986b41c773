import Logging
import PostgresNIO
import Synchronization

/// Gives each SQL text the stores send a statement name, so that PostgreSQL parses and plans it once per
/// connection and then only binds and executes it (PostgresNIO prepares a named statement on a
/// connection the first time it runs there).
///
/// A name that failed is given up for a new one, prepared afresh at its next run: PostgresNIO answers
/// every later run of a statement whose preparation failed with that failure, and PostgreSQL refuses a
/// prepared `SELECT *` whose table gained a column (another instance's newer schema version) from then on. The
/// second case is also run again at once under the new name, unless a transaction already failed with it.
final class PreparedStatements: Sendable {
    /// Beyond this many texts (statements whose text varies, such as an admin listing's limit), statements
    /// run unprepared rather than filling every connection with one-off statements.
    static let limit = 256

    private struct Names {
        var byText: [String: String] = [:]
        var issued = 0
    }

    private let names = Mutex(Names())

    func run(
        _ sql: String, _ bindings: PostgresBindings, on connection: PostgresConnection, inTransaction: Bool, logger: Logger,
        _ onRow: (PostgresRow) -> Void
    ) async throws {
        guard let name = name(for: sql) else {
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger) {
                onRow(row)
            }
            return
        }
        do {
            try await execute(NamedStatement.Text(name: name, sql: sql), bindings, on: connection, logger: logger, onRow)
        } catch let error as PSQLError where error.code == .server && !Self.isAnswerAboutData(error) {
            let renamed = rename(sql, replacing: name)
            guard Self.isStalePlan(error), !inTransaction else { throw error }
            try await execute(NamedStatement.Text(name: renamed, sql: sql), bindings, on: connection, logger: logger, onRow)
        }
    }

    private func execute(
        _ text: NamedStatement.Text, _ bindings: PostgresBindings, on connection: PostgresConnection, logger: Logger,
        _ onRow: (PostgresRow) -> Void
    ) async throws {
        let rows = try await NamedStatement.$text.withValue(text) {
            try await connection.execute(NamedStatement(bindings: bindings), logger: logger)
        }
        for try await row in rows { onRow(row) }
    }

    /// The statement name of `sql`, given on first use; nil once `limit` texts have names.
    private func name(for sql: String) -> String? {
        names.withLock { names in
            if let name = names.byText[sql] { return name }
            guard names.byText.count < Self.limit else { return nil }
            return Self.issue(for: sql, in: &names)
        }
    }

    /// A new name for `sql` in place of `failed`; the one another run gave it already, if any, so that
    /// runs failing together rename it once.
    private func rename(_ sql: String, replacing failed: String) -> String {
        names.withLock { names in
            if let current = names.byText[sql], current != failed { return current }
            return Self.issue(for: sql, in: &names)
        }
    }

    private static func issue(for sql: String, in names: inout Names) -> String {
        names.issued += 1
        let name = "countersign_\(names.issued)"
        names.byText[sql] = name
        return name
    }

    /// A broken unique key or other constraint (SQLSTATE class 23), which the stores expect
    /// (`refusingDuplicate`), or a deferred statement that changed no row (`OneStatementCommit`): an answer
    /// about the data, not a broken statement.
    private static func isAnswerAboutData(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state.hasPrefix("23") || state == OneStatementCommit.refusedState
    }

    /// PostgreSQL's "cached plan must not change result type" (SQLSTATE 0A000, raised where it revalidates
    /// a cached plan; the message itself may be translated).
    private static func isStalePlan(_ error: PSQLError) -> Bool {
        error.serverInfo?[.sqlState] == "0A000" && error.serverInfo?[.routine] == "RevalidateCachedQuery"
    }
}

/// PostgresNIO's prepared statement, whose name and text are the type's own (`static`). The text of one
/// execution is set for the call's task around `execute`, which reads both there (postgres-nio 1.33).
private struct NamedStatement: PostgresPreparedStatement {
    struct Text: Sendable {
        let name: String
        let sql: String
    }

    @TaskLocal static var text: Text?

    static var name: String { current.name }
    static var sql: String { current.sql }

    private static var current: Text {
        guard let text else { preconditionFailure("a prepared statement read outside PreparedStatements.execute") }
        return text
    }

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}
