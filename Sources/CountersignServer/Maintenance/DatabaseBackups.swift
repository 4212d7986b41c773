import Foundation

/// Backups the admin asks for: a copy of the database written into the backup directory while the server
/// goes on serving (`StorageEngine.writeBackup`), each one recorded as a security event.
struct DatabaseBackups: Sendable {
    let storage: Storage
    let directory: String
    let clock: any WallClock
    let securityEvents: SecurityEvents

    /// Writes and records one backup; a copy whose record could not be stored is removed, so that no copy
    /// of the database exists without its record.
    func backUp() async throws -> DatabaseBackup {
        let backup = try await storage.writeBackup(into: directory, at: clock.now())
        do {
            try await securityEvents.recordNow(.databaseBackedUp, detail: "a copy of the database was written to \(backup.path)")
        } catch {
            try? FileManager.default.removeItem(atPath: backup.path)
            throw error
        }
        return backup
    }
}
