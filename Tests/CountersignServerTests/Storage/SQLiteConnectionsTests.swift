@testable import CountersignServer
import Foundation
import GRDB
import Logging
import NIOPosix
import Testing

/// On SQLite one writer connection serves every write and, while nobody holds it, the reads too; other
/// reads go to reader connections. Whichever a read gets, it sees what is committed and nothing else.
///
/// The time limit fails a lock that is never let go instead of hanging the run. It leaves room for a whole
/// server's start: beside every other suite on two cores, a test waits up to about a minute for its turn.
@Suite("SQLite connections", .timeLimit(.minutes(5)))
struct SQLiteConnectionsTests {
    @Test("a read made while a transaction holds the writer neither waits for it nor sees its uncommitted rows")
    func readsSeeOnlyCommittedRows() async throws {
        try await withEngine { engine, _ in
            try await engine.transaction { transaction in
                try await transaction.raw("INSERT INTO notes (body) VALUES ('draft')").run()
                // The transaction holds the writer, so this read must go elsewhere and must not wait.
                #expect(try await notes(engine.executor) == 0)
                #expect(try await notes(transaction) == 1)
            }
            #expect(try await notes(engine.executor) == 1)
        }
    }

    @Test("a read while the writer is free runs on the writer, whose cache is warm; during a transaction, on a reader")
    func readsTakeTheFreeWriter() async throws {
        try await withEngine { engine, _ in
            try await engine.executor.raw("INSERT INTO notes (body) VALUES ('kept')").run()
            // `last_insert_rowid()` is the connection's own: 1 on the writer that inserted, 0 on a reader.
            #expect(try await lastInsertedRow(engine.executor) == 1)
            try await engine.transaction { transaction in
                try await transaction.raw("INSERT INTO notes (body) VALUES ('draft')").run()
                #expect(try await lastInsertedRow(engine.executor) == 0)
            }
        }
    }

    @Test("a read while the writer is free sees the last commit, and a rolled-back write is never seen")
    func readsAfterCommitAndRollback() async throws {
        try await withEngine { engine, _ in
            try await engine.executor.raw("INSERT INTO notes (body) VALUES ('kept')").run()
            #expect(try await notes(engine.executor) == 1)
            struct Abandoned: Error {}
            await #expect(throws: Abandoned.self) {
                try await engine.transaction { transaction in
                    try await transaction.raw("INSERT INTO notes (body) VALUES ('dropped')").run()
                    throw Abandoned()
                }
            }
            #expect(try await notes(engine.executor) == 1)
        }
    }

    /// A cached `SELECT notes.*, tags.label` whose `notes` gains a column has `label` one place on: read by
    /// the names of its first run, `label` would be the new column's NULL.
    @Test("a column added to a joined table after its statement was cached leaves every column read by its own name, on the writer and on a reader")
    func columnAddedUnderACachedStatement() async throws {
        try await withEngine { engine, _ in
            try await engine.executor.raw("CREATE TABLE tags (label TEXT NOT NULL)").run()
            try await engine.executor.raw("INSERT INTO notes (body) VALUES ('kept')").run()
            try await engine.executor.raw("INSERT INTO tags (label) VALUES ('red')").run()
            /// The join's label: on the writer, or on a reader while a transaction holds the writer.
            func label(onAReader: Bool) async throws -> String {
                let read: @Sendable () async throws -> String = { try await engine.executor.raw("SELECT notes.*, tags.label FROM notes, tags").first()!.decode(column: "label", as: String.self) }
                guard onAReader else { return try await read() }
                return try await engine.transaction { _ in try await read() }
            }
            for onAReader in [false, true] { #expect(try await label(onAReader: onAReader) == "red") }
            try await engine.executor.raw("ALTER TABLE notes ADD COLUMN added_later TEXT").run()
            for onAReader in [false, true] { #expect(try await label(onAReader: onAReader) == "red") }
        }
    }

    @Test("reads and writes from many tasks at once: every read sees a whole number of committed transactions")
    func concurrentReadersAndWriters() async throws {
        try await withEngine { engine, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<25 {
                            // Each transaction adds two rows, so no read may ever count an odd number.
                            try await engine.transaction { transaction in
                                try await transaction.raw("INSERT INTO notes (body) VALUES ('a')").run()
                                await Task.yield()  // the readers' turn, between the two
                                try await transaction.raw("INSERT INTO notes (body) VALUES ('b')").run()
                            }
                        }
                    }
                    group.addTask {
                        for _ in 0..<100 {
                            let seen = try await notes(engine.executor)
                            #expect(seen % 2 == 0)
                            await Task.yield()
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await notes(engine.executor) == 200)
        }
    }

    @Test("the log is checkpointed by the checkpointer while commits go on, and then starts over instead of growing; every row stays readable")
    func checkpointsOffTheWriter() async throws {
        try await withEngine { engine, path in
            // A row of 4,000 bytes takes a page of its own: each commit adds pages to the log.
            let body = String(repeating: "x", count: 4000)
            var rows = 0
            func insert(_ count: Int) async throws {
                for _ in 0..<count { try await engine.executor.raw("INSERT INTO notes (body) VALUES (\(bind: body))").run() }
                rows += count
            }
            func logSize() throws -> Int { try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0 }
            // Commits go on until the checkpointer has copied the log once: a checkpoint that only ran beside
            // them would leave pages uncopied, and the log could never start over.
            while engine.checkpoints == 0 {
                try #require(rows < 10_000, "no checkpoint after \(rows) commits")
                try await insert(50)
                await Task.yield()
            }
            let sizeBefore = try logSize()
            // 200 more rows (about 600 pages): a log that started over rewrites its beginning; one that did
            // not grows by them.
            try await insert(200)
            #expect(try logSize() < sizeBefore + 300 * 4096)
            #expect(try await notes(engine.executor) == rows)
            // Another engine of this process opening the file reads every row.
            let other = try SQLiteStorageEngine(path: path, logger: Logger(label: "test"))
            #expect(try await notes(other.executor) == rows)
            try await other.shutdown()
        }
    }

    @Test("a checkpoint that finds another connection checkpointing logs no error, and one warning once the log is long; checkpoints go on once it lets go")
    func checkpointFindsTheDatabaseBusy() async throws {
        let store = LogStore()
        try await withEngine(logger: Logger(label: "test") { _ in CapturingLogHandler(store: store) }) { engine, path in
            func lines(_ level: String) -> [String] { store.lines.withLock { $0 }.filter { $0.hasPrefix(level + " ") } }
            @Sendable func insert(_ count: Int, bytes: Int = 4000, on database: any SQLExecutor) async throws {
                let body = String(repeating: "x", count: bytes)
                for _ in 0..<count { try await database.raw("INSERT INTO notes (body) VALUES (\(bind: body))").run() }
            }
            func logPages() throws -> Int {
                let size = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
                return max(0, size - 32) / (4096 + 24)
            }
            // The log grows to just under the checkpointer's mark.
            while try logPages() < SQLiteCheckpointer.pagesBeforeCheckpoint - 100 { try await insert(5, on: engine.executor) }
            #expect(engine.checkpoints == 0)

            // Another connection of the process starts a full checkpoint while the engine's writer holds
            // a transaction: it takes SQLite's checkpoint lock and waits for the writer in its busy handler,
            // holding that lock until it is told to give up.
            let waiting = DispatchSemaphore(value: 0), giveUp = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
            var configuration = GRDB.Configuration()
            configuration.busyMode = .callback { tries in
                if tries == 0 { waiting.signal() }
                giveUp.wait()
                return false
            }
            let other = try DatabaseQueue(path: path, configuration: configuration)
            try await engine.transaction { transaction in
                try await insert(200, on: transaction)
                DispatchQueue.global().async {
                    _ = try? other.writeWithoutTransaction { db in try db.checkpoint(.full) }
                    ended.signal()
                }
                await waitOffTheLoop(for: waiting)
            }
            // That commit took the log past the mark: the checkpoint it asked for found the database busy.
            try await eventually("the checkpointer found the database busy") { !lines("debug").isEmpty }
            #expect(lines("warning").isEmpty, "a short log is no cause for a warning")

            // Commits go on while the other connection holds the lock, each asking for a checkpoint that
            // finds it busy; past 10,000 pages, that is worth a warning (one: the log stops short of 20,000).
            while try logPages() < SQLiteCheckpointer.pagesBeforeWarning + 100 { try await insert(100, bytes: 40_000, on: engine.executor) }
            try await insert(1, on: engine.executor)
            try await eventually("a warning about the long log") { !lines("warning").isEmpty }
            #expect(engine.checkpoints == 0)
            #expect(lines("warning").count == 1, "one warning for each 10,000 pages the log grows, not one a commit")

            // The other connection gives up, and its full checkpoint falls back to a passive one that copies
            // the whole log; the log starts over. Past the mark again, the engine's checkpointer copies it.
            giveUp.signal()
            await waitOffTheLoop(for: ended)
            try other.close()
            let longest = try logPages()
            var rows = 0
            while engine.checkpoints == 0 {
                try #require(rows < 500, "no checkpoint after \(rows) more rows")
                try await insert(10, bytes: 40_000, on: engine.executor)
                rows += 10
                await Task.yield()
            }
            #expect(try logPages() <= longest, "the log started over instead of growing")
            #expect(lines("error").isEmpty, "\(lines("error"))")
        }
    }

    @Test("a read-only connection that one read holds is not handed to another read at once, and refuses writes")
    func readOnlyConnectionsAreHeldAlone() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sqlite-readers-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let writer = try DatabasePool(path: path)
        try writer.write { db in try db.execute(sql: "CREATE TABLE notes (body TEXT NOT NULL)") }
        let readers = try SQLiteReaders(path: path, count: 1, busyTimeout: 1)
        let outer = try readers.ifFree { _ in
            // The only connection is held by the read around this one: this read must find none free.
            try readers.ifFree { _ in "second" }
        }
        #expect(outer == .some(nil))
        #expect(try readers.ifFree { _ in "again" } == "again")
        #expect(throws: (any Error).self) {
            _ = try readers.ifFree { db in try db.execute(sql: "INSERT INTO notes (body) VALUES ('x')") }
        }
        try readers.close()
        try writer.close()
    }

    @Test("every kind of value reads back as stored: integer, real, text (with a NUL inside), blob, empty blob and NULL")
    func everyKindOfValueReadsBack() async throws {
        try await withEngine { engine, _ in
            let row = try #require(try await engine.executor.raw("""
                SELECT 9007199254740993 AS i, 2.5 AS f, 'é' || char(0) || 'z' AS t, x'00ff10' AS b, x'' AS e, NULL AS n
                """).first())
            #expect(row.columns == ["i", "f", "t", "b", "e", "n"])
            #expect(try row.decode(column: "i", as: Int.self) == 9_007_199_254_740_993)
            #expect(try row.decode(column: "f", as: Double.self) == 2.5)
            #expect(try row.decode(column: "t", as: String.self) == "é\u{0}z")
            #expect(try row.decode(column: "b", as: Data.self) == Data([0x00, 0xFF, 0x10]))
            #expect(try row.decode(column: "e", as: Data.self) == Data())
            #expect(try row.isNull("n"))
            #expect(try !row.isNull("e"))
            #expect(throws: DatabaseRowError.self) { try row.decode(column: "missing", as: String.self) }
        }
    }

    private func lastInsertedRow(_ sql: any SQLExecutor) async throws -> Int {
        try await sql.raw("SELECT last_insert_rowid() AS id").first()!.decode(column: "id", as: Int.self)
    }

    private func notes(_ sql: any SQLExecutor) async throws -> Int {
        try await sql.raw("SELECT count(*) AS n FROM notes").first()!.decode(column: "n", as: Int.self)
    }

    /// Runs `body` on an engine over a new database file (at `path`) with an empty table `notes`.
    /// Waits for `semaphore` on a thread of Dispatch's, not on the event loop running the test.
    private func waitOffTheLoop(for semaphore: DispatchSemaphore) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                semaphore.wait()
                continuation.resume()
            }
        }
    }

    @Test("a server on an in-memory database keeps it in a file of its own while it runs, and leaves none behind once stopped")
    func inMemoryDatabaseLeavesNoFile() async throws {
        var path = ""
        try await TestServer.run(on: .at(.sqliteMemory), clock: TestClock(), masterKey: TestServer.randomMasterKey()) { server in
            let row = try #require(try await server.sql.raw("PRAGMA database_list").first())
            path = try row.decode(column: "file", as: String.self)
            #expect(FileManager.default.fileExists(atPath: path))
        }
        #expect(!path.isEmpty)
        for suffix in ["", "-wal", "-shm"] {
            #expect(!FileManager.default.fileExists(atPath: path + suffix), "\(path + suffix) is left behind")
        }
    }

    @Test("an ephemeral database's claim removes the file and its companions at its first release, and only then; a named file's claim leaves its file")
    func ephemeralClaimRemovesItsFiles() throws {
        let directory = FileManager.default.temporaryDirectory.path
        let ephemeralPath = directory + "/claim-ephemeral-\(UUID().uuidString).sqlite"
        let claim = try SQLiteFileClaim(path: ephemeralPath, ephemeral: true)
        #expect(FileManager.default.createFile(atPath: ephemeralPath + "-wal", contents: Data()))
        claim.release()
        for suffix in ["", "-wal"] { #expect(!FileManager.default.fileExists(atPath: ephemeralPath + suffix)) }
        // A second release lets nothing go, so it removes nothing: not a file made since under that name.
        #expect(FileManager.default.createFile(atPath: ephemeralPath, contents: Data()))
        claim.release()
        #expect(FileManager.default.fileExists(atPath: ephemeralPath))
        try FileManager.default.removeItem(atPath: ephemeralPath)

        let namedPath = directory + "/claim-named-\(UUID().uuidString).sqlite"
        try SQLiteFileClaim(path: namedPath).release()
        #expect(FileManager.default.fileExists(atPath: namedPath))
        try FileManager.default.removeItem(atPath: namedPath)
    }

    private func withEngine(
        logger: Logger = Logger(label: "test"), _ body: (SQLiteStorageEngine, _ path: String) async throws -> Void
    ) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sqlite-connections-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let engine = try SQLiteStorageEngine(path: path, logger: logger)
        do {
            try await engine.executor.raw("CREATE TABLE notes (body TEXT NOT NULL)").run()
            try await body(engine, path)
        } catch {
            try? await engine.shutdown()
            throw error
        }
        try await engine.shutdown()
    }
}
