import Foundation
import GRDB
import GRDBSQLite
import Logging
import NIOCore
import SQLKit
import SQLiteKit
import SQLiteNIO

/// SQLKit's `SQLDatabase` over a GRDB connection pool: the stores' statements run on the calling thread,
/// with GRDB's cached prepared statements, instead of a hop to a thread pool and back for each one.
///
/// SQLite statements are short and in memory (WAL, no fsync at commit), so running them inline costs
/// less than handing them to another thread. Values are encoded and decoded as sqlite-nio does, so files
/// written before (dates as Unix time) read the same.
struct GRDBSQLDatabase: AsyncSQLDatabase {
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
    let logger: Logger
    let eventLoop: any EventLoop

    var dialect: any SQLDialect { SQLiteDialect() }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLKit.SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
        let (sql, binds) = serialize(query)
        // As optionals of GRDB's protocol: its initializer for concrete values maps them through a key path
        // built anew at every call (1.5 % of a flow's CPU in the profile).
        let arguments = StatementArguments(try binds.map { try Self.databaseValue($0) as (any DatabaseValueConvertible)? })
        let statement = Self.statement(sql, arguments, onRow)
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

    /// One statement, to run on whichever connection it is handed, here and now (GRDB's synchronous access).
    private static func statement(
        _ sql: String, _ arguments: StatementArguments, _ onRow: @escaping (any SQLRow) -> Void
    ) -> (GRDB.Database) throws -> Void {
        { db in
            let rows = try SQLRowCursor(try db.cachedStatement(sql: sql), arguments: arguments)
            while let row = try rows.next() { onRow(row) }
        }
    }

    /// One encoder for every bind: each `SQLiteDataEncoder()` would make a `JSONEncoder` of its own.
    private static let encoder = SQLiteDataEncoder()

    /// A bind as sqlite-nio would store it.
    private static func databaseValue(_ bind: any Encodable & Sendable) throws -> DatabaseValue {
        switch try encoder.encode(bind) {
        case .integer(let value): Int64(value).databaseValue
        case .float(let value): value.databaseValue
        case .text(let value): value.databaseValue
        case .blob(let buffer): Data(buffer.readableBytesView).databaseValue
        case .null: .null
        }
    }
}

/// A statement's rows as SQLKit reads them, each copied out of the statement as it steps.
///
/// GRDB's own `Row` cursor would build a table of the statement's column names (and one of their
/// lowercased forms) each time the statement runs; this one takes the names the cached statement keeps.
///
/// Those names are kept from the statement's first run. A statement that SQLite prepared again since,
/// because the schema changed (a column added by a later schema version), may have other columns: a `SELECT a.*, b.x`
/// moves `b.x` one place on. Its names are read afresh, after the first step, which is when SQLite
/// prepares it again.
private final class SQLRowCursor: DatabaseCursor {
    typealias Element = GRDBRow
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

    func _element(sqliteStatement: SQLiteStatement) -> GRDBRow {
        GRDBRow(columns: columns, sqliteStatement: sqliteStatement)
    }
}

/// A result row, copied out of the statement and decoded as sqlite-nio would.
struct GRDBRow: SQLRow {
    /// One decoder for every value: each `SQLiteDataDecoder()` would make a `JSONDecoder` of its own.
    private static let decoder = SQLiteDataDecoder()

    /// The statement's column names, shared by its rows.
    private let columns: [String]
    private let values: [SQLiteData]

    init(columns: [String], sqliteStatement: SQLiteStatement) {
        self.columns = columns
        values = (0..<CInt(columns.count)).map { index in
            switch sqlite3_column_type(sqliteStatement, index) {
            case SQLITE_INTEGER: .integer(SQLiteInt64(sqlite3_column_int64(sqliteStatement, index)))
            case SQLITE_FLOAT: .float(sqlite3_column_double(sqliteStatement, index))
            case SQLITE_TEXT:
                .text(String(decoding: UnsafeRawBufferPointer(
                    start: sqlite3_column_text(sqliteStatement, index),
                    count: Int(sqlite3_column_bytes(sqliteStatement, index))), as: UTF8.self))
            case SQLITE_BLOB:
                .blob(ByteBuffer(bytes: UnsafeRawBufferPointer(
                    start: sqlite3_column_blob(sqliteStatement, index),
                    count: Int(sqlite3_column_bytes(sqliteStatement, index)))))
            default: .null
            }
        }
    }

    var allColumns: [String] { columns }

    func contains(column: String) -> Bool { columns.contains(column) }

    func decodeNil(column: String) throws -> Bool { data(column) == .null }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let data = data(column) else {
            throw DecodingError.keyNotFound(
                SQLiteColumnKey(column), .init(codingPath: [], debugDescription: "No column named '\(column)'."))
        }
        return try Self.decoder.decode(D.self, from: data)
    }

    private func data(_ column: String) -> SQLiteData? {
        columns.firstIndex(of: column).map { values[$0] }
    }

    private struct SQLiteColumnKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
