import Foundation
import GRDB
import Logging
import NIOCore
import SQLKit

/// SQLite through GRDB: a pool in WAL mode with one writer connection and concurrent readers.
struct SQLiteStorageEngine: StorageEngine {
    private let pool: DatabasePool
    private let lock = SQLiteWriteLock()
    private let logger: Logger
    private let eventLoop: any EventLoop

    init(path: String, logger: Logger, eventLoop: any EventLoop) throws {
        var configuration = GRDB.Configuration()
        configuration.foreignKeysEnabled = true
        // A transaction spans several statements, each its own access to the writer, across the awaits
        // between them; `SQLiteWriteLock` keeps every other writer out until it ends.
        configuration.allowsUnsafeTransactions = true
        // Another process writing (`countersign migrate`) is waited for by SQLite's sleeping busy
        // handler, never by spinning.
        configuration.busyMode = .timeout(5)
        pool = try DatabasePool(path: path, configuration: configuration)
        self.logger = logger
        self.eventLoop = eventLoop
    }

    var sql: any SQLDatabase {
        GRDBSQLDatabase(pool: pool, session: .autocommit(lock), logger: logger, eventLoop: eventLoop)
    }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let database = GRDBSQLDatabase(pool: pool, session: .transaction, logger: logger, eventLoop: eventLoop)
        return try await lock.withLock {
            try await database.raw("BEGIN IMMEDIATE").run()
            do {
                let result = try await body(database)
                try await database.raw("COMMIT").run()
                return result
            } catch {
                try? await database.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    func shutdown() async throws {
        try pool.close()
    }
}
