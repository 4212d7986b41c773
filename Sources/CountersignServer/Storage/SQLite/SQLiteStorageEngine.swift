import CSQLiteSettings
import Foundation
import GRDB
import Logging
import NIOCore

/// SQLite through GRDB: a pool in WAL mode with one writer connection and concurrent readers. Its
/// connections hold the file against other processes and coordinate with one another in memory
/// (`CSQLiteSettings.h`, `SQLiteFileClaim`).
struct SQLiteStorageEngine: StorageEngine {
    private let pool: DatabasePool
    private let checkpointer: SQLiteCheckpointer
    private let readers: SQLiteReaders
    private let lock = SQLiteWriteLock()
    private let claim: SQLiteFileClaim?

    /// Opens the engine's connections to `path`; `claim`, when given, is released by a shutdown that closed them all.
    init(path: String, releasingAtShutdown claim: SQLiteFileClaim? = nil, logger: Logger) throws {
        guard Self.processSettingsApplied else { throw SQLiteCannotHoldFiles() }
        var configuration = GRDB.Configuration()
        configuration.foreignKeysEnabled = true
        // A transaction spans several statements, each its own access to the writer, across the awaits
        // between them; `SQLiteWriteLock` keeps every other statement off the writer until it ends.
        configuration.allowsUnsafeTransactions = true
        // Another process in the file as it opens (the sqlite3 shell reading it, say) is waited for by
        // SQLite's sleeping busy handler, never by spinning, and the start refused after `busyTimeout`.
        configuration.busyMode = .timeout(Self.busyTimeout)
        pool = try DatabasePool(path: path, configuration: configuration)
        try Self.requireMinimumVersion(of: pool)
        do {
            try SQLiteSchema.migrate(pool)
        } catch {
            try? pool.close()
            throw error
        }
        do {
            readers = try SQLiteReaders(path: path, count: System.coreCount, busyTimeout: Self.busyTimeout)
        } catch {
            try? pool.close()
            throw error
        }
        do {
            checkpointer = try SQLiteCheckpointer(path: path, lock: lock, logger: logger)
        } catch {
            try? readers.close()
            try? pool.close()
            throw error
        }
        checkpointer.watch(pool)
        self.claim = claim
    }

    /// SQLite's process-wide settings (`CSQLiteSettings.h` says why each), told once, before the first
    /// connection opens; false when the files cannot be held alone.
    private static let processSettingsApplied: Bool = {
        _ = countersign_sqlite_stop_memory_statistics()
        _ = countersign_sqlite_stop_bulk_page_cache()
        return countersign_sqlite_hold_files_alone() == 0  // SQLITE_OK
    }()

    /// Seconds a connection waits, sleeping, for another process in the database file when it opens.
    static let busyTimeout: TimeInterval = 5

    /// The oldest SQLite the stores' statements run on (`RETURNING` came in 3.35).
    static let minimumVersion = (major: 3, minor: 35)

    /// GRDB uses the system's SQLite, which may be older than the statements need: refused at start, with
    /// the version found, rather than with a syntax error in the middle of a call.
    private static func requireMinimumVersion(of pool: DatabasePool) throws {
        let version = try pool.read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()") } ?? "unknown"
        let parts = version.split(separator: ".").compactMap { Int($0) }
        guard parts.count >= 2, (parts[0], parts[1]) >= minimumVersion else {
            try? pool.close()
            throw SQLiteTooOld(found: version)
        }
    }

    var executor: any SQLExecutor {
        SQLiteExecutor(pool: pool, session: .autocommit(lock, readers))
    }

    /// SQLite has no data-modifying `WITH` queries; its statements cost no round trip.
    var commitsStatementsAsOne: Bool { false }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> T) async throws -> T {
        let database = SQLiteExecutor(pool: pool, session: .transaction)
        // IMMEDIATE: the write lock is SQLite's from the start, not at the first write.
        return try await lock.withLock { try await database.runTransaction(begin: "BEGIN IMMEDIATE") { try await body(database) } }
    }

    func writeBackup(into directory: String, at time: Date) async throws -> DatabaseBackup {
        try await SQLiteBackup.write(from: pool, into: directory, at: time)
    }

    /// Checkpoint rounds run off the writer's thread so far.
    var checkpoints: Int { checkpointer.checkpoints }

    func shutdown() async throws {
        do {
            try await checkpointer.close()
            // The writer closes even when a reader failed to close.
            let readersClosed = Result { try readers.close() }
            try pool.close()
            try readersClosed.get()
        } catch {
            // An ephemeral file nobody else may open goes even so; removing a file still open harms nothing.
            if claim?.isEphemeral == true { claim?.release() }
            throw error
        }
        // Only once every connection has closed: a connection left open keeps the file held.
        claim?.release()
    }
}

/// The system's SQLite is older than `SQLiteStorageEngine.minimumVersion`.
struct SQLiteTooOld: Error, CustomStringConvertible {
    let found: String
    var description: String {
        let minimum = SQLiteStorageEngine.minimumVersion
        return "SQLite \(found) is too old: Countersign needs \(minimum.major).\(minimum.minor) or later (install a newer libsqlite3)."
    }
}

/// The system's SQLite has no "unix-excl" VFS, through which the server holds its database file alone.
struct SQLiteCannotHoldFiles: Error, CustomStringConvertible {
    var description: String { "This SQLite has no \"unix-excl\" VFS, which Countersign opens its database file through." }
}
