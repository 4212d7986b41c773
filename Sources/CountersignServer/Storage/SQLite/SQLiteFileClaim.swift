import Foundation
import Synchronization

/// A server's hold on its SQLite file while it runs: the file is private to its owner and locked against
/// every other process.
///
/// SQLite's connections take the file through the "unix-excl" VFS (`CSQLiteSettings.h`), which shuts
/// other processes out once they are open, but a second server or `countersign migrate` opening the file
/// meanwhile would wait on SQLite's busy handler first. This claim is taken before any connection opens,
/// with `flock` (which SQLite's own `fcntl` locks neither see nor disturb, on a local file system), so
/// that such a process is refused at once, by name, instead.
final class SQLiteFileClaim: Sendable {
    let path: String
    /// Whether the release removes the file: it is the ephemeral database of `sqlite::memory:`.
    let isEphemeral: Bool
    private let descriptor: Mutex<Int32?>

    /// Opens `path` (created readable and writable by its owner only when missing; narrowed so when an
    /// older start left it open to others, with its `-wal` and `-shm` files) and locks it for this claim.
    /// An `ephemeral` file (the database of `sqlite::memory:`) and its companions are removed at the release,
    /// or at once if the claim fails.
    init(path: String, ephemeral: Bool = false) throws {
        // Not inherited by a process the server starts, which would keep the file claimed after it.
        let descriptor = Foundation.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw DatabaseFileError(path: path, problem: "cannot be opened or created") }
        do {
            // Locked first: a process refused here changes nothing of the file another server holds.
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let failure = errno
                guard failure == EWOULDBLOCK else {
                    throw DatabaseFileError(path: path, problem: "cannot be locked: \(String(cString: strerror(failure)))")
                }
                throw DatabaseFileError(path: path, problem: "is in use by another process (a countersign server holds its database while it runs)")
            }
            try Self.restrictToOwner(descriptor, path: path)
        } catch {
            close(descriptor)
            if ephemeral { Self.remove(path) }
            throw error
        }
        self.path = path
        self.isEphemeral = ephemeral
        self.descriptor = Mutex(descriptor)
    }

    private static func restrictToOwner(_ descriptor: Int32, path: String) throws {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw DatabaseFileError(path: path, problem: "cannot be read") }
        if status.st_mode & 0o077 != 0, fchmod(descriptor, 0o600) != 0 {
            throw DatabaseFileError(path: path, problem: "can be read by others and its mode cannot be set to 0600")
        }
        for companion in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + companion) {
            _ = chmod(path + companion, 0o600)
        }
    }

    /// Lets the file go, once every connection to it is closed: closing a descriptor of the file would
    /// drop the `fcntl` locks SQLite still held on it in this process.
    func release() {
        let released = descriptor.withLock { descriptor in
            defer { descriptor = nil }
            return descriptor.map { close($0) } != nil
        }
        if released, isEphemeral { Self.remove(path) }
    }

    private static func remove(_ path: String) {
        for file in ["", "-wal", "-shm"].map({ path + $0 }) { try? FileManager.default.removeItem(atPath: file) }
    }
}

/// The SQLite file cannot be claimed: not opened, not private to its owner, or held by another process.
struct DatabaseFileError: Error, CustomStringConvertible {
    let path: String
    let problem: String
    var description: String { "The database file \(path) \(problem)." }
}
