import Foundation
import GRDB
import GRDBSQLite

/// The stores' statements on a GRDB connection pool, run on the calling thread with GRDB's cached
/// prepared statements, instead of a hop to a thread pool and back for each one.
///
/// SQLite statements are short and in memory (WAL, no fsync at commit), so running them inline costs
/// less than handing them to another thread.
struct SQLiteExecutor: SQLExecutor {
    /// Where statements go: everything to the pool's single writer, except reads outside a transaction
    /// while the writer is taken, which go to a reader connection.
    enum Session: Sendable {
        /// Outside a transaction: a write first waits for the writer lock, and a read uses the writer only
        /// when it can take the lock at once, so neither lands inside another task's open transaction.
        case autocommit(SQLiteWriteLock, SQLiteReaders)
        /// Inside a transaction holding the writer lock.
        case transaction
    }

    let pool: DatabasePool
    let session: Session

    var database: DatabaseKind { .sqlite }

    func execute(_ statement: BoundStatement, _ onRow: @escaping @Sendable (DatabaseRow) -> Void) async throws {
        // As optionals of GRDB's protocol: its initializer for concrete values maps them through a key path
        // built anew at every call (1.5 % of a flow's CPU in the profile).
        let arguments = StatementArguments(statement.binds.map { $0.sqliteValue as (any DatabaseValueConvertible)? })
        try await dispatch(statement.sql) { db in
            let prepared = try db.cachedStatement(sql: statement.sql)
            assert(Self.numbersParametersInOrder(prepared), "parameters of \(statement.sql) not first used as $1, $2…")
            let rows = try RowCursor(prepared, arguments: arguments)
            while let row = try rows.next() { onRow(row) }
        }
    }

    /// Runs `statement` on the connection its session gives it.
    private func dispatch(_ sql: String, _ statement: (GRDB.Database) throws -> Void) async throws {
        switch session {
        case .transaction:
            try pool.writeWithoutTransaction(statement)
        case .autocommit(let lock, let readers):
            if Self.isRead(sql) {
                // A reader connection loses its page cache whenever the writer commits, and reads the
                // pages again from the file; the writer's stays warm. So a read takes the writer when it is
                // free, and a reader (in parallel, on the last committed snapshot) when it is not. A read is
                // one statement, so SQLite's implicit transaction around it isolates it.
                if try lock.ifFree({ try pool.writeWithoutTransaction(statement) }) == nil, try readers.ifFree(statement) == nil {
                    try pool.unsafeRead(statement)
                }
            } else {
                try await lock.withLock { try pool.writeWithoutTransaction(statement) }
            }
        }
    }

    /// A statement that only reads: it may run on a reader connection.
    private static func isRead(_ sql: String) -> Bool {
        sql.prefix(7).uppercased().hasPrefix("SELECT")
    }
}

/// A statement's rows, each copied out of the statement as it steps.
///
/// GRDB's own `Row` cursor would build a table of the statement's column names (and one of their
/// lowercased forms) each time the statement runs; this one takes the names the cached statement keeps.
///
/// Those names are kept from the statement's first run. A statement that SQLite prepared again since,
/// because the schema changed (a column added by a later schema version), may have other columns: a `SELECT a.*, b.x`
/// moves `b.x` one place on. Its names are read afresh, after the first step, which is when SQLite
/// prepares it again.
private final class RowCursor: DatabaseCursor {
    typealias Element = DatabaseRow
    let _statement: Statement
    var _isDone = false
    private lazy var columns: [String] = Self.columnNames(of: _statement)

    init(_ statement: Statement, arguments: StatementArguments) throws {
        _statement = statement
        try statement.setArguments(arguments)
    }

    /// The kept names, unless SQLite has prepared the statement again since they were read.
    private static func columnNames(of statement: Statement) -> [String] {
        let sqliteStatement = statement.sqliteStatement
        guard sqlite3_stmt_status(sqliteStatement, SQLITE_STMTSTATUS_REPREPARE, 0) > 0 else { return statement.columnNames }
        return (0..<sqlite3_column_count(sqliteStatement)).map { String(cString: sqlite3_column_name(sqliteStatement, $0)) }
    }

    deinit {
        // As GRDB's cursors do: a statement left unreset would keep its read open.
        sqlite3_reset(_statement.sqliteStatement)
    }

    func _element(sqliteStatement: SQLiteStatement) -> DatabaseRow {
        DatabaseRow(columns: columns, sqliteStatement: sqliteStatement)
    }
}

extension SQLiteExecutor {
    /// Whether SQLite numbered the statement's parameters as PostgreSQL does (`BoundStatement`): `$1`
    /// first, then `$2`, and so on.
    private static func numbersParametersInOrder(_ statement: Statement) -> Bool {
        let sqliteStatement = statement.sqliteStatement
        return (1..<(sqlite3_bind_parameter_count(sqliteStatement) + 1)).allSatisfy { index in
            sqlite3_bind_parameter_name(sqliteStatement, index).map { String(cString: $0) } == "$\(index)"
        }
    }
}

extension SQLValue {
    /// The value as the SQLite schema keeps it: a boolean as 0 or 1, a time as Unix seconds.
    var sqliteValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let value): value.databaseValue
        case .real(let value): value.databaseValue
        case .text(let value): value.databaseValue
        case .boolean(let value): Int64(value ? 1 : 0).databaseValue
        case .date(let value): value.timeIntervalSince1970.databaseValue
        case .blob(let value): Data(value).databaseValue
        }
    }
}

extension DatabaseRow {
    /// The row SQLite's statement stands on, copied out of it.
    init(columns: [String], sqliteStatement: SQLiteStatement) {
        self.init(columns: columns, values: (0..<CInt(columns.count)).map { index in
            switch sqlite3_column_type(sqliteStatement, index) {
            case SQLITE_INTEGER: .integer(sqlite3_column_int64(sqliteStatement, index))
            case SQLITE_FLOAT: .real(sqlite3_column_double(sqliteStatement, index))
            case SQLITE_TEXT:
                .text(String(decoding: UnsafeRawBufferPointer(
                    start: sqlite3_column_text(sqliteStatement, index),
                    count: Int(sqlite3_column_bytes(sqliteStatement, index))), as: UTF8.self))
            case SQLITE_BLOB:
                .blob([UInt8](UnsafeRawBufferPointer(
                    start: sqlite3_column_blob(sqliteStatement, index),
                    count: Int(sqlite3_column_bytes(sqliteStatement, index)))))
            default: .null
            }
        })
    }
}
