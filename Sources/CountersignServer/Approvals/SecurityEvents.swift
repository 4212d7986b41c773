import CountersignCore
import Foundation
import Logging

/// Records security events: stored for `GET /admin/v1/security-events` and logged at warning, the
/// default level's reach. Never a secret.
struct SecurityEvents: Sendable {
    let storage: Storage
    let clock: any WallClock
    let logger: Logger

    /// Records `kind` with the call's writes, and logs it once they are committed.
    func record(_ kind: SecurityEventKind, userID: String?, approvalID: String? = nil, deviceID: String? = nil, detail: String, in work: UnitOfWork) async {
        let event = event(kind, userID: userID, approvalID: approvalID, deviceID: deviceID, detail: detail)
        await work.hold { storage in try await storage.securityEvents.insert(event) }
        let logger = logger
        await work.afterCommit { Self.log(event, to: logger) }
    }

    /// Records `kind` at once: for a refusal, whose call commits nothing, or an admin action.
    func recordNow(_ kind: SecurityEventKind, userID: String? = nil, deviceID: String? = nil, detail: String) async throws {
        let event = event(kind, userID: userID, approvalID: nil, deviceID: deviceID, detail: detail)
        try await storage.securityEvents.insert(event)
        Self.log(event, to: logger)
    }

    private func event(_ kind: SecurityEventKind, userID: String?, approvalID: String?, deviceID: String?, detail: String) -> SecurityEventRecord {
        SecurityEventRecord(
            id: SecureRandom.identifier(prefix: "sev"), kind: kind.rawValue, userID: userID, approvalID: approvalID, deviceID: deviceID,
            detail: detail, createdAt: clock.now())
    }

    private static func log(_ event: SecurityEventRecord, to logger: Logger) {
        var metadata: Logger.Metadata = ["security_event": "\(event.kind)", "detail": "\(event.detail)"]
        if let userID = event.userID { metadata["user_id"] = "\(userID)" }
        if let approvalID = event.approvalID { metadata["approval_id"] = "\(approvalID)" }
        if let deviceID = event.deviceID { metadata["device_id"] = "\(deviceID)" }
        logger.warning("security event", metadata: metadata)
    }
}
