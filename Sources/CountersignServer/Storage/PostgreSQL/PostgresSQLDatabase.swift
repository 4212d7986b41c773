import AsyncKit
import Logging
import NIOCore
import PostgresKit
import PostgresNIO
// SQLKit's wrapper around a record's properties, as its drivers read it.
@_spi(CodableUtilities) import SQLKit

/// SQLKit's `SQLDatabase` over PostgresNIO connections, each statement prepared once per connection and
/// reused (`PreparedStatements`).
struct PostgresSQLDatabase: AsyncSQLDatabase {
    /// Where statements go. `@unchecked Sendable` for AsyncKit's pool, as `PostgresStorageEngine` explains.
    enum Session: @unchecked Sendable {
        /// Outside a transaction: each statement on a connection of the pool, returned when it is done.
        case pooled(EventLoopConnectionPool<PostgresConnectionSource>)
        /// Inside a transaction, on its connection.
        case transaction(PostgresConnection)
    }

    let session: Session
    let statements: PreparedStatements
    /// How long a statement waits for PostgreSQL's answer before its connection is closed.
    let answerLimit: Duration
    let logger: Logger

    var eventLoop: any EventLoop {
        switch session {
        case .pooled(let pool): pool.eventLoop
        case .transaction(let connection): connection.eventLoop
        }
    }

    var dialect: any SQLDialect { PostgresDialect() }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
        let (sql, binds) = serialize(query)
        let bindings = try PostgresBindings(sqlKitBinds: binds)
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
        _ onRow: (any SQLRow) -> Void
    ) async throws {
        let limit = eventLoopTimer(after: answerLimit) { _ = connection.close() as EventLoopFuture<Void> }
        defer { limit.cancel() }
        try await statements.run(sql, bindings, on: connection, inTransaction: inTransaction, logger: logger, onRow)
    }
}

extension PostgresBindings {
    /// The binds of a store's statement. The stores bind text, integers, booleans, dates and NULL, each of
    /// which PostgresNIO encodes itself (SQLKit hands a record's properties over in a wrapper of its own),
    /// into TEXT, BIGINT, BOOLEAN and TIMESTAMPTZ columns. A prepared statement keeps the parameter types of
    /// its first run; a NULL leaves the type to PostgreSQL, which takes the column's: the same as these
    /// encode to. Any other type is refused (`UnsupportedBind`), where PostgresKit would have written JSON.
    init(sqlKitBinds binds: [any Encodable & Sendable]) throws {
        self.init(capacity: binds.count)
        for bind in binds {
            let value = (bind as? any SQLKitWrapper)?.wrapped ?? bind
            if let value = value as? any PostgresThrowingDynamicTypeEncodable {
                try append(value)
            } else if let optional = value as? any OptionalValue, optional.isNone {
                appendNull()
            } else {
                throw UnsupportedBind(type: "\(type(of: value))")
            }
        }
    }
}

/// SQLKit's wrapper around each property of a record it inserts.
private protocol SQLKitWrapper {
    var wrapped: Any { get }
}

extension FakeSendableCodable: SQLKitWrapper {
    fileprivate var wrapped: Any { value }
}

/// Tells a NULL bind (an empty optional of any type) from a value.
private protocol OptionalValue {
    var isNone: Bool { get }
}

extension Optional: OptionalValue {
    fileprivate var isNone: Bool { self == nil }
}

/// A store bound a value PostgreSQL has no encoding for here: a programming error, found by the suite on PostgreSQL.
struct UnsupportedBind: Error, CustomStringConvertible {
    let type: String
    var description: String { "A statement binds a \(type), which has no PostgreSQL encoding." }
}
