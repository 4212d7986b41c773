import Foundation
import GRDB

/// A copy of the running server's SQLite database, written while it goes on serving.
///
/// The server holds its file alone (`SQLiteFileClaim`), so no other program can copy it consistently
/// while it runs; the server writes the copy itself instead. `VACUUM INTO` runs on a read-only
/// connection of its own: the copy is the last commit before it began, and no writer waits for it (in
/// WAL mode a read holds no lock a commit needs). The file appears under its final name only once it is
/// whole and synced to the disk, readable by its owner only, like the database.
enum SQLiteBackup {
    /// Writes a copy of the database at `path` into `directory` (created, mode 0700, when missing), named
    /// after `time`; a name already taken gets `-2`, `-3`, … so that no backup ever replaces another.
    static func write(from path: String, into directory: String, at time: Date, busyTimeout: TimeInterval) async throws -> DatabaseBackup {
        let directory = URL(fileURLWithPath: directory).standardizedFileURL
        try createDirectory(directory)
        let partial = directory.appendingPathComponent(".countersign-backup-\(UUID().uuidString).partial").path
        // Created empty first, so that it is the owner's alone from its first byte (VACUUM INTO accepts an empty file).
        let descriptor = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw BackupFailed(directory: directory.path, problem: "cannot be written to", errno: errno) }
        close(descriptor)
        do {
            try await copy(database: path, into: partial, busyTimeout: busyTimeout)
            let bytes = try sync(partial, directory: directory.path)
            let final = try link(partial, into: directory, named: fileName(at: time))
            unlink(partial)
            try syncDirectory(directory.path)
            return DatabaseBackup(path: final, bytes: bytes)
        } catch {
            unlink(partial)
            throw error
        }
    }

    private static func createDirectory(_ directory: URL) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw BackupFailed(directory: directory.path, problem: "is not a directory") }
            return
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw BackupFailed(directory: directory.path, problem: "cannot be created (\(error.localizedDescription))")
        }
    }

    private static func copy(database path: String, into destination: String, busyTimeout: TimeInterval) async throws {
        var configuration = GRDB.Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(busyTimeout)
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        do {
            // Outside any transaction, as VACUUM must be; on GRDB's own thread for the connection.
            try await connection.writeWithoutTransaction { db in try db.execute(sql: "VACUUM INTO ?", arguments: [destination]) }
        } catch {
            try? connection.close()
            throw error
        }
        try connection.close()
    }

    /// Flushes the file at `path` to the disk; returns its size.
    private static func sync(_ path: String, directory: String) throws -> Int64 {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw BackupFailed(directory: directory, problem: "lost the backup it was writing", errno: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fsync(descriptor) == 0, fstat(descriptor, &status) == 0 else {
            throw BackupFailed(directory: directory, problem: "cannot be synced to the disk", errno: errno)
        }
        return Int64(status.st_size)
    }

    /// Gives `partial` the first free name of `name`, `name-2`, …: `link` never replaces a file that exists.
    private static func link(_ partial: String, into directory: URL, named name: (stem: String, suffix: String)) throws -> String {
        for attempt in 1...1000 {
            let candidate = directory.appendingPathComponent(name.stem + (attempt == 1 ? "" : "-\(attempt)") + name.suffix).path
            if Foundation.link(partial, candidate) == 0 { return candidate }
            guard errno == EEXIST else { throw BackupFailed(directory: directory.path, problem: "cannot be written to", errno: errno) }
        }
        throw BackupFailed(directory: directory.path, problem: "already holds a thousand backups named \(name.stem)")
    }

    /// `countersign-20261125T101500Z.sqlite`: when the backup began, in UTC.
    private static func fileName(at time: Date) -> (stem: String, suffix: String) {
        let format = Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted, timeZone: .gmt)
        return ("countersign-" + time.formatted(format), ".sqlite")
    }

    /// Makes the new name itself durable: a name is an entry in the directory's own file.
    private static func syncDirectory(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw BackupFailed(directory: path, problem: "cannot be opened", errno: errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw BackupFailed(directory: path, problem: "cannot be synced to the disk", errno: errno) }
    }
}

/// The backup directory would not take the copy.
struct BackupFailed: Error, CustomStringConvertible {
    let description: String

    init(directory: String, problem: String, errno failure: Int32? = nil) {
        let reason = failure.map { ": " + String(cString: strerror($0)) } ?? ""
        description = "The backup directory \(directory) \(problem)\(reason)."
    }
}
