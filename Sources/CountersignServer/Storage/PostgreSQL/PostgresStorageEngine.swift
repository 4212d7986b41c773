import AsyncKit
import CountersignCore
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// PostgreSQL through connection pools, one per event loop: a statement uses the pool of the loop it is
/// made on, so its answer comes back to the same thread. Every statement is prepared once per connection
/// (`PreparedStatements`).
///
/// `@unchecked Sendable` for AsyncKit's pools, which are safe to share (the group's under a lock, each
/// loop's confined to its loop) but not marked so; Fluent's own PostgreSQL driver holds them the same way.
struct PostgresStorageEngine: StorageEngine, @unchecked Sendable {
    /// More than one connection per event loop: with one, every call of a loop queued behind the others'
    /// statements (docs/BENCHMARKS.md: 107 → 129 flows/s with four).
    static let connectionsPerEventLoop = 4

    private let pools: EventLoopGroupConnectionPool<PostgresConnectionFactory>
    private let eventLoopGroup: any EventLoopGroup
    private let statements = PreparedStatements()
    private let answerLimit: Duration
    private let logger: Logger

    /// A request waits at most `waitLimit` for a connection, and `answerLimit` for each statement's answer,
    /// before it is refused (`DatabaseOutage`).
    init(
        configuration: PostgresConnection.Configuration, waitLimit: TimeAmount, answerLimit: Duration, eventLoopGroup: any EventLoopGroup,
        logger: Logger
    ) {
        pools = EventLoopGroupConnectionPool(
            source: PostgresConnectionFactory(configuration: configuration),
            maxConnectionsPerEventLoop: Self.connectionsPerEventLoop, requestTimeout: waitLimit, pruneInterval: nil,
            logger: logger, on: eventLoopGroup)
        self.eventLoopGroup = eventLoopGroup
        self.answerLimit = answerLimit
        self.logger = logger
    }

    /// The pool of the calling event loop.
    private var pool: EventLoopConnectionPool<PostgresConnectionFactory> {
        pools.pool(for: MultiThreadedEventLoopGroup.currentEventLoop ?? eventLoopGroup.any())
    }

    var executor: any SQLExecutor {
        PostgresExecutor(session: .pooled(pool), statements: statements, answerLimit: answerLimit, logger: logger)
    }

    var commitsStatementsAsOne: Bool { true }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> T) async throws -> T {
        let pool = pool
        let connection = try await pool.requestConnection(logger: logger).get()
        defer { pool.releaseConnection(connection, logger: logger) }
        let executor = PostgresExecutor(session: .transaction(connection), statements: statements, answerLimit: answerLimit, logger: logger)
        // A connection that cannot roll back is not handed to the next caller half-way through.
        return try await executor.runTransaction({ try await body(executor) }, rollbackFailed: { try? await connection.close() })
    }

    /// Refused: PostgreSQL is backed up with its own tools (docs/DEPLOYMENT.md, "What to back up").
    func writeBackup(into directory: String, at time: Date) async throws -> DatabaseBackup {
        throw ServiceError(
            .conflict, ErrorCode.backupNotAvailable,
            "This server runs on PostgreSQL: back the database up with PostgreSQL's own tools (pg_basebackup or pg_dump).")
    }

    func shutdown() async throws {
        try await pools.shutdownAsync()
    }
}
