import Foundation
import GRDB

/// A copy of the running server's SQLite database, written while it goes on serving.
///
/// The server holds its file alone (`SQLiteFileClaim`), so no other program can copy it consistently
/// while it runs; the server writes the copy itself instead. `VACUUM INTO` runs on one of the pool's
/// read-only connections: the copy is the last commit before it began, no writer waits for it (in WAL
/// mode a read holds no lock a commit needs), and the engine's shutdown waits for it before letting the
/// file go. The file appears under its final name only once it is whole and synced to the disk, readable
/// by its owner only, like the database. Until then it is a hidden partial file, locked by its writer; a
/// backup that finds a partial file no one holds (its server was stopped while writing it) removes it.
enum SQLiteBackup {
    private static let partialPrefix = ".countersign-backup-"
    private static let partialSuffix = ".partial"
    /// The name a partial file has for the instant between its creation and its lock (`write`).
    private static let unnamedSuffix = partialSuffix + ".new"
    /// How old an unnamed partial file must be to be taken for abandoned: one is named microseconds after
    /// it is created, so one this old belongs to a server stopped in between.
    private static let unnamedAbandonedAfter: TimeInterval = 60

    /// Writes a copy of `pool`'s database into `directory` (created, mode 0700, when missing; refused when
    /// others may write in it), named after `time`; a name already taken gets `-2`, `-3`, … so that no
    /// backup ever replaces another.
    static func write(from pool: DatabasePool, into directory: String, at time: Date) async throws -> DatabaseBackup {
        let directory = URL(fileURLWithPath: directory).standardizedFileURL
        try prepareDirectory(directory)
        removeAbandonedPartials(in: directory)
        let stem = directory.appendingPathComponent(partialPrefix + UUID().uuidString).path
        let partial = stem + partialSuffix
        // Created empty first, so that it is the owner's alone from its first byte (VACUUM INTO accepts an
        // empty file), and locked until this returns. It is locked before it takes its partial name: a
        // backup beginning meanwhile that found it unlocked would take it for abandoned and remove it, and
        // VACUUM INTO would then create the copy anew, readable by others.
        let unnamed = stem + unnamedSuffix
        let descriptor = open(unnamed, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let failure = errno
            throw BackupFailed(directory: directory.path, problem: "cannot be written to", errno: failure)
        }
        defer { close(descriptor) }
        flock(descriptor, LOCK_EX)
        guard rename(unnamed, partial) == 0 else {
            let failure = errno
            unlink(unnamed)
            throw BackupFailed(directory: directory.path, problem: "cannot be written to", errno: failure)
        }
        do {
            // Outside any transaction, as VACUUM must be.
            try await pool.unsafeRead { db in try db.execute(sql: "VACUUM INTO ?", arguments: [partial]) }
            let bytes = try sync(partial, directory: directory.path)
            let final = try link(partial, into: directory, named: fileName(at: time))
            unlink(partial)
            do {
                try syncDirectory(directory.path)
            } catch {
                unlink(final)
                throw error
            }
            return DatabaseBackup(path: final, bytes: bytes, createdAt: time)
        } catch {
            unlink(partial)
            throw error
        }
    }

    /// Removes the partial files of backups whose writer is gone. A backup still being written, by this
    /// server or another, holds the lock on its own; an unnamed one is not locked yet, and is taken for
    /// abandoned only once it is a minute old.
    private static func removeAbandonedPartials(in directory: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where name.hasPrefix(partialPrefix) && (name.hasSuffix(partialSuffix) || name.hasSuffix(unnamedSuffix)) {
            let path = directory.appendingPathComponent(name).path
            let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            if name.hasSuffix(unnamedSuffix) {
                let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
                guard let modified, Date().timeIntervalSince(modified) > unnamedAbandonedAfter else { continue }
            }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { unlink(path) }
        }
    }

    /// Creates `directory` with mode 0700 (and syncs its parent, so that it outlives a power loss), or
    /// checks that no one else may write in it: another user could swap the copy while it is written. Two
    /// backups at once may both find it missing; the one whose `mkdir` loses checks the other's.
    private static func prepareDirectory(_ directory: URL) throws {
        let path = directory.path
        var status = stat()
        if stat(path, &status) != 0 {
            let parent = directory.deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            } catch {
                throw BackupFailed(directory: path, problem: "cannot be created (\(error.localizedDescription))")
            }
            if mkdir(path, 0o700) == 0 { return try syncDirectory(parent.path) }
            let failure = errno
            guard failure == EEXIST, stat(path, &status) == 0 else { throw BackupFailed(directory: path, problem: "cannot be created", errno: failure) }
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw BackupFailed(directory: path, problem: "is not a directory") }
        guard status.st_uid == geteuid(), status.st_mode & 0o022 == 0 else {
            throw BackupFailed(directory: path, problem: "may be written by other users; give it to the server's user with mode 0700")
        }
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
            let failure = errno
            guard failure == EEXIST else { throw BackupFailed(directory: directory.path, problem: "cannot be written to", errno: failure) }
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
