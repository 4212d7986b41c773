import Foundation
import GRDB
import Synchronization

/// Read-only connections for the reads that find the writer taken, one per event loop, each taken without
/// waiting.
///
/// GRDB's own reader pool hands its connections out under locks that put an event loop's thread to sleep
/// whenever both loops read at once (a quarter of the server's context switches in the `web_login`
/// benchmark), and checks the schema version with a statement of its own before every read. A read that
/// finds every connection here taken (more threads than loops, as in the tests) still goes to the pool.
final class SQLiteReaders: Sendable {
    private final class Reader: Sendable {
        let connection: DatabaseQueue
        let taken = Atomic(false)

        init(_ connection: DatabaseQueue) {
            self.connection = connection
        }
    }

    private let readers: [Reader]

    init(path: String, count: Int, busyTimeout: TimeInterval) throws {
        var configuration = GRDB.Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(busyTimeout)
        var readers: [Reader] = []
        do {
            for _ in 0..<count { readers.append(Reader(try DatabaseQueue(path: path, configuration: configuration))) }
        } catch {
            for reader in readers { try? reader.connection.close() }
            throw error
        }
        self.readers = readers
    }

    /// Runs `body` on a connection nobody holds, here and now; nil, without waiting, when all are held.
    func ifFree<T>(_ body: (GRDB.Database) throws -> T) throws -> T? {
        for reader in readers where reader.taken.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            defer { reader.taken.store(false, ordering: .releasing) }
            return try reader.connection.unsafeRead(body)
        }
        return nil
    }

    /// Closes every connection, also after one failed to close; throws the first failure.
    func close() throws {
        var firstFailure: (any Error)?
        for reader in readers {
            do { try reader.connection.close() } catch { firstFailure = firstFailure ?? error }
        }
        if let firstFailure { throw firstFailure }
    }
}
