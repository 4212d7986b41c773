import CountersignCore
import Foundation
import Hummingbird

/// `POST /admin/v1/backups`: the server writes a copy of its SQLite database into the backup directory
/// while it goes on serving (no other program may open the file it holds). Refused on PostgreSQL, which
/// is backed up with its own tools.
struct BackupRoutes: RouteGroup {
    let verifier: AdminAccess
    let backups: DatabaseBackups

    func register(on router: Router<ServerRequestContext>) {
        router.adminAPI(verifier).post("backups", use: backUp)
    }

    func backUp(request: Request, context: ServerRequestContext) async throws -> Response {
        let backup: DatabaseBackup
        do {
            backup = try await backups.backUp()
        } catch let failure as BackupFailed {
            // The operator's call, on the operator's directory: the reason is theirs to see.
            throw ServiceError(.failed, ErrorCode.backupFailed, failure.description)
        }
        return try .wire(
            BackupView(
                file: URL(fileURLWithPath: backup.path).lastPathComponent, path: backup.path, bytes: backup.bytes, createdAt: backup.createdAt),
            status: .created)
    }
}
