import CountersignCore
import Foundation
import Logging

/// Records security events: stored for `GET /admin/v1/security-events` and logged at warning, the
/// default level's reach. Never a secret.
///
/// Events an attacker can cause at will (wrong admin keys, refused requests) are stored once a minute per
/// source and logged every time, so that an attack cannot fill the database through its own record.
struct SecurityEvents: Sendable {
    let storage: Storage
    let clock: any WallClock
    let logger: Logger
    private let stored = RecentlyStored()

    /// How long a repeat of a throttled event is only logged.
    static let repeatWindow: TimeInterval = 60

    init(storage: Storage, clock: any WallClock, logger: Logger) {
        self.storage = storage
        self.clock = clock
        self.logger = logger
    }

    /// Records `kind` with the call's writes, and logs it once they are committed.
    func record(_ kind: SecurityEventKind, userID: String?, approvalID: String? = nil, deviceID: String? = nil, detail: String, in work: UnitOfWork) async {
        let event = event(kind, userID: userID, approvalID: approvalID, deviceID: deviceID, detail: detail)
        await work.hold { storage in try await storage.securityEvents.insert(event) }
        let logger = logger
        await work.afterCommit { Self.log(event, to: logger) }
    }

    /// Runs `change` and stores its event in one transaction, so that an admin change is never kept
    /// without its record; logs the event once committed.
    func recording<T: Sendable>(
        _ kind: SecurityEventKind, userID: String? = nil, deviceID: String? = nil, detail: String,
        _ change: @escaping @Sendable (Storage) async throws -> T
    ) async throws -> T {
        let event = event(kind, userID: userID, approvalID: nil, deviceID: deviceID, detail: detail)
        let result = try await storage.transaction { storage in
            let result = try await change(storage)
            try await storage.securityEvents.insert(event)
            return result
        }
        Self.log(event, to: logger)
        return result
    }

    /// Records `kind` at once: for a refusal, whose call commits nothing, or an admin action. With a
    /// `source`, a repeat from the same source within `repeatWindow` is neither stored nor logged, so that
    /// a flood fills neither the table nor the log: the first of the window stands for it.
    func recordNow(
        _ kind: SecurityEventKind, userID: String? = nil, deviceID: String? = nil, detail: String, source: String? = nil
    ) async throws {
        let event = event(kind, userID: userID, approvalID: nil, deviceID: deviceID, detail: detail)
        if let source, await !stored.isFirst(kind.rawValue + "\n" + source, at: event.createdAt, within: Self.repeatWindow) { return }
        Self.log(event, to: logger)
        try await storage.securityEvents.insert(event)
    }

    private func event(_ kind: SecurityEventKind, userID: String?, approvalID: String?, deviceID: String?, detail: String) -> SecurityEventRecord {
        SecurityEventRecord(
            id: SecureRandom.identifier(prefix: "sev"), kind: kind.rawValue, userID: userID, approvalID: approvalID, deviceID: deviceID,
            detail: detail, actor: AdminActor.current, createdAt: clock.now())
    }

    private static func log(_ event: SecurityEventRecord, to logger: Logger) {
        var metadata: Logger.Metadata = ["security_event": "\(event.kind)", "detail": "\(event.detail)"]
        if let userID = event.userID { metadata["user_id"] = "\(userID)" }
        if let approvalID = event.approvalID { metadata["approval_id"] = "\(approvalID)" }
        if let deviceID = event.deviceID { metadata["device_id"] = "\(deviceID)" }
        if let actor = event.actor { metadata["actor"] = "\(actor)" }
        logger.warning("security event", metadata: metadata)
    }
}

/// Who is making the admin request the current task serves, for the security events it records.
enum AdminActor {
    /// Requests made with the admin key.
    static let adminKey = "admin_key"
    /// `adminKey`, the email of the console's operator, or nil outside the admin API.
    @TaskLocal static var current: String?
}

/// When each throttled event was last stored, by kind and source.
private actor RecentlyStored {
    /// Sources remembered at most, which is also the most throttled events stored in one window; past
    /// it, the entries older than the window are forgotten.
    static let capacity = 1_000
    private var storedAt: [String: Date] = [:]

    /// Whether `key` was not stored within `window` before `now`; if so, it counts as stored now. When
    /// more sources than `capacity` were stored within the window (an attack from many addresses), a new
    /// one is neither stored nor logged, and neither this map, the table nor the log grows without end.
    func isFirst(_ key: String, at now: Date, within window: TimeInterval) -> Bool {
        if let last = storedAt[key], now.timeIntervalSince(last) < window { return false }
        if storedAt.count >= Self.capacity {
            storedAt = storedAt.filter { now.timeIntervalSince($0.value) < window }
            if storedAt.count >= Self.capacity { return false }
        }
        storedAt[key] = now
        return true
    }
}
