import Foundation
import Vapor

/// `POST /admin/v1/backups`: the server writes a copy of its SQLite database into the backup directory
/// while it goes on serving (no other program may open the file it holds). Refused on PostgreSQL, which
/// is backed up with its own tools.
struct BackupRoutes: RouteCollection {
    let verifier: AdminKeyVerifier
    let storage: Storage
    let directory: String
    let clock: any WallClock
    let securityEvents: SecurityEvents

    func boot(routes: any RoutesBuilder) throws {
        routes.adminAPI(verifier).post("backups", use: backUp)
    }

    func backUp(request: Request) async throws -> Response {
        let time = clock.now()
        let backup = try await storage.writeBackup(into: directory, at: time)
        do {
            try await securityEvents.recordNow(.databaseBackedUp, detail: "a copy of the database was written to \(backup.path)")
        } catch {
            // No copy of the database without its record.
            try? FileManager.default.removeItem(atPath: backup.path)
            throw error
        }
        let file = URL(fileURLWithPath: backup.path).lastPathComponent
        return try .wire(BackupView(file: file, path: backup.path, bytes: backup.bytes, createdAt: time), status: .created)
    }
}
