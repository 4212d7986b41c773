import AsyncKit
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The stores' statements on PostgresNIO connections, each statement prepared once per connection and
/// reused (`PreparedStatements`).
struct PostgresExecutor: SQLExecutor {
    /// Where statements go. `@unchecked Sendable` for AsyncKit's pool, as `PostgresStorageEngine` explains.
    enum Session: @unchecked Sendable {
        /// Outside a transaction: each statement on a connection of the pool, returned when it is done.
        case pooled(EventLoopConnectionPool<PostgresConnectionFactory>)
        /// Inside a transaction, on its connection.
        case transaction(PostgresConnection)
    }

    let session: Session
    let statements: PreparedStatements
    /// How long a statement waits for PostgreSQL's answer before its connection is closed.
    let answerLimit: Duration
    let logger: Logger

    var database: DatabaseKind { .postgresql }

    func execute(_ statement: BoundStatement, _ onRow: @escaping @Sendable (DatabaseRow) -> Void) async throws {
        var bindings = PostgresBindings(capacity: statement.binds.count)
        for bind in statement.binds {
            switch bind {
            // No type: PostgreSQL takes the column's (a prepared statement keeps the types of its first run).
            case .null: bindings.appendNull()
            case .integer(let value): bindings.append(value)
            case .real(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .boolean(let value): bindings.append(value)
            case .date(let value): bindings.append(value)
            case .blob(let value): bindings.append(ByteBuffer(bytes: value))
            }
        }
        var columns: [String]?
        try await run(statement.sql, bindings) { row in
            let names = columns ?? row.makeRandomAccess().map(\.columnName)
            columns = names
            onRow(DatabaseRow(columns: names, postgresRow: row))
        }
    }

    private func run(_ sql: String, _ bindings: PostgresBindings, _ onRow: (PostgresRow) -> Void) async throws {
        switch session {
        case .transaction(let connection):
            try await run(sql, bindings, on: connection, inTransaction: true, onRow)
        case .pooled(let pool):
            let connection = try await pool.requestConnection(logger: logger).get()
            defer { pool.releaseConnection(connection, logger: logger) }
            try await run(sql, bindings, on: connection, inTransaction: false, onRow)
        }
    }

    /// Runs the statement on `connection`, closing it if PostgreSQL has not answered within `answerLimit`:
    /// the statement then fails as a closed connection (`DatabaseOutage`), PostgreSQL rolls back whatever the
    /// connection had not committed, and the pool opens a new connection in its place.
    ///
    /// A limit reached during `COMMIT` leaves the outcome to PostgreSQL, as any connection lost there does
    /// (docs/DEPLOYMENT.md, "When the database goes away").
    private func run(
        _ sql: String, _ bindings: PostgresBindings, on connection: PostgresConnection, inTransaction: Bool,
        _ onRow: (PostgresRow) -> Void
    ) async throws {
        let limit = eventLoopTimer(after: answerLimit) { _ = connection.close() as EventLoopFuture<Void> }
        defer { limit.cancel() }
        try await statements.run(sql, bindings, on: connection, inTransaction: inTransaction, logger: logger, onRow)
    }
}

extension DatabaseRow {
    /// The row's cells, decoded by their PostgreSQL types: the types of the schema's columns and of what
    /// the stores compute from them (counts, `EXISTS`). Any other type, `bytea` among them, is its bytes.
    init(columns: [String], postgresRow row: PostgresRow) {
        self.init(columns: columns, values: row.map { cell in
            guard let bytes = cell.bytes else { return .null }
            let value: SQLValue? = switch cell.dataType {
            case .bool: (try? cell.decode(Bool.self)).map(SQLValue.boolean)
            case .int2, .int4, .int8: (try? cell.decode(Int64.self)).map(SQLValue.integer)
            case .float4, .float8: (try? cell.decode(Double.self)).map(SQLValue.real)
            case .timestamptz, .timestamp: (try? cell.decode(Date.self)).map(SQLValue.date)
            case .numeric: (try? cell.decode(String.self)).flatMap(Double.init).map(SQLValue.real)
            case .text, .varchar, .bpchar, .name: (try? cell.decode(String.self)).map(SQLValue.text)
            default: nil
            }
            // Anything else is kept as its bytes: a store reading it as text, a number or a time then
            // fails naming the column, rather than reading a value that is not there.
            return value ?? .blob(Array(bytes.readableBytesView))
        })
    }
}
