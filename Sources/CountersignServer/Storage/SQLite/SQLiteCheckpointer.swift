import Dispatch
import GRDB
import GRDBSQLite
import Logging
import Synchronization

/// Copies the write-ahead log back into the database file on a thread of its own, never on the thread
/// that committed.
///
/// SQLite checkpoints in the commit that takes the log past 1,000 pages, and a checkpoint syncs both files
/// to disk: that commit then holds its thread (here an event loop, serving every other request on it) for
/// as long as the disk takes, measured up to 68 ms. Instead, the writer's commits report the log's length
/// here, and past the same mark a checkpoint runs on this checkpointer's own connection and thread.
///
/// It runs in two passes. The first copies the log while commits go on (SQLite's passive checkpoint waits
/// for no one). The log starts again from its beginning only after a checkpoint that copied all of it,
/// which the first pass cannot do while commits keep adding to it; so the second pass holds the writer
/// (`SQLiteWriteLock`: waiting tasks are suspended, no thread is held) and copies the few pages committed
/// meanwhile.
///
/// A checkpoint finds the database busy when it reads the log's index at the instant the writer rewrites
/// it, or when another connection holds SQLite's checkpoint lock (none of the server's others takes it, and
/// no other process opens the file while the server holds it); SQLite waits for neither. Nothing is lost:
/// the log keeps every page, and the next commit past the mark asks again. Only a log that keeps growing
/// while checkpoints keep finding it busy is worth an operator's attention.
final class SQLiteCheckpointer: Sendable {
    /// SQLite's own mark for checkpointing (`wal_autocheckpoint`).
    static let pagesBeforeCheckpoint = 1000
    /// A log this long (about 40 MiB) that a checkpoint finds busy is reported as a warning, and again at
    /// every 10,000 pages more.
    static let pagesBeforeWarning = 10 * pagesBeforeCheckpoint

    private let connection: DatabaseQueue
    private let lock: SQLiteWriteLock
    private let logger: Logger
    private let queue = DispatchQueue(label: "countersign.sqlite-checkpoint")
    private let requests: AsyncStream<Void>.Continuation
    private let loop = Mutex<Task<Void, Never>?>(nil)
    private let finished = Atomic(0)
    /// The log's length in pages at the writer's last commit.
    private let logPages = Atomic(0)

    init(path: String, lock: SQLiteWriteLock, logger: Logger) throws {
        var configuration = GRDB.Configuration()
        // As the pool's own connections: the log is synced at checkpoints only, and another process in the
        // file is waited for, sleeping, when the connection opens.
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(SQLiteStorageEngine.busyTimeout)
        connection = try DatabaseQueue(path: path, configuration: configuration)
        self.lock = lock
        self.logger = logger
        let (stream, requests) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.requests = requests
        loop.withLock { $0 = Task { await self.run(stream) } }
    }

    /// Checkpoints once for each request, until `close()`.
    private func run(_ requests: AsyncStream<Void>) async {
        // The log's length from which a busy round warns; each warning moves it another 10,000 pages on, so
        // a lock held for long warns as the log grows, not at every commit.
        var warnAt = Self.pagesBeforeWarning
        for await _ in requests {
            do {
                // Commits made during a round ask for another; by then the log may have started over.
                if try await checkpoint() >= Self.pagesBeforeCheckpoint {
                    _ = try await lock.withLock { try await checkpoint() }
                    finished.add(1, ordering: .relaxed)
                }
                warnAt = Self.pagesBeforeWarning
            } catch let error as GRDB.DatabaseError where error.resultCode == .SQLITE_BUSY {
                let pages = logPages.load(ordering: .relaxed)
                if pages >= warnAt {
                    warnAt = pages + Self.pagesBeforeWarning
                    logger.warning("SQLite checkpoints keep finding the database busy; the write-ahead log has grown to \(pages) pages")
                } else {
                    logger.debug("SQLite checkpoint found the database busy; the next commit asks again")
                }
            } catch {
                // The log stays as it was, and a later commit asks again; a log that keeps growing shows here.
                logger.error("SQLite checkpoint failed: \(error)")
            }
        }
    }

    /// Checkpoint rounds (both passes) completed so far.
    var checkpoints: Int { finished.load(ordering: .relaxed) }

    /// Makes the writer's commits report here, in place of SQLite's checkpoint in the commit. `self` must
    /// outlive `writer`'s connection.
    func watch(_ writer: DatabasePool) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        writer.writeWithoutTransaction { db in
            _ = sqlite3_wal_hook(db.sqliteConnection, { context, _, _, pages in
                let checkpointer = Unmanaged<SQLiteCheckpointer>.fromOpaque(context!).takeUnretainedValue()
                checkpointer.logPages.store(Int(pages), ordering: .relaxed)
                if pages >= SQLiteCheckpointer.pagesBeforeCheckpoint { checkpointer.requests.yield() }
                return SQLITE_OK
            }, context)
        }
    }

    /// A passive checkpoint on the checkpointer's connection and thread; returns the log's length in pages.
    private func checkpoint() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [connection] in
                continuation.resume(with: Result { try connection.writeWithoutTransaction { db in try db.checkpoint(.passive).walFrameCount } })
            }
        }
    }

    /// Waits for a running checkpoint and closes the connection.
    func close() async throws {
        requests.finish()
        await loop.withLock { $0 }?.value
        try connection.close()
    }
}
