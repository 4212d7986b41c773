import Foundation

/// Backups the admin asks for: a copy of the database written into the backup directory while the server
/// goes on serving (`StorageEngine.writeBackup`), each one recorded as a security event.
struct DatabaseBackups: Sendable {
    let storage: Storage
    let directory: String
    let clock: any WallClock
    let securityEvents: SecurityEvents

    /// A backup written, with when it began.
    struct Written {
        let backup: DatabaseBackup
        let startedAt: Date
    }

    /// Writes and records one backup; a copy whose record could not be stored is removed, so that no copy
    /// of the database exists without its record.
    func backUp() async throws -> Written {
        let startedAt = clock.now()
        let backup = try await storage.writeBackup(into: directory, at: startedAt)
        do {
            try await securityEvents.recordNow(.databaseBackedUp, detail: "a copy of the database was written to \(backup.path)")
        } catch {
            try? FileManager.default.removeItem(atPath: backup.path)
            throw error
        }
        return Written(backup: backup, startedAt: startedAt)
    }
}
