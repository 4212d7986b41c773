import Foundation
import Journeys

/// Every statement on `ciba_requests`: backend clients' requests for approvals, found by their
/// `auth_req_id`'s hash, redeemed once.
struct CIBARequestStore {
    let db: any SQLExecutor

    /// Adds `request`, held with the call's writes (with its approval).
    func insert(_ request: CIBARequestRecord) -> DeferredStatement {
        DeferredStatement(BoundStatement("""
            INSERT INTO ciba_requests (
                id, auth_req_hash, client_id, user_id, approval_id, scope, notification_token, notification_auth_req_id,
                notify_due_at, notify_first_attempt_at, notified_at, poll_interval, next_poll_at, expires_at, created_at, redeemed_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
            """,
            request.id, request.authReqHash, request.clientID, request.userID, request.approvalID, request.scope,
            request.notificationToken, request.notificationAuthReqID, request.notifyDueAt, request.notifyFirstAttemptAt,
            request.notifiedAt, request.pollInterval, request.nextPollAt, request.expiresAt, request.createdAt, request.redeemedAt))
    }

    /// A ping request whose answer is known and whose notification is due, with where it goes.
    struct DuePing: Sendable {
        let request: CIBARequestRecord
        let endpoint: String
    }

    /// Up to `limit` ping requests whose notification is due at `now`: answered (the approval closed, or
    /// swept), or expired. Ordered by id, so that instances reading at once meet in the same order.
    func duePings(at now: Date, limit: Int) async throws -> [DuePing] {
        try await db.all(Self.duePings, now, ApprovalStatus.pending.rawValue, limit).map { row in
            DuePing(request: try CIBARequestRecord(row: row), endpoint: try row["ping_endpoint"])
        }
    }

    private static let duePings = """
        SELECT request.*, backend.notification_endpoint AS ping_endpoint
        FROM ciba_requests request
        JOIN backend_clients backend ON backend.client_id = request.client_id
        LEFT JOIN approvals approval ON approval.id = request.approval_id
        WHERE request.notified_at IS NULL AND request.notification_token IS NOT NULL
            AND (request.notify_due_at IS NULL OR request.notify_due_at <= $1)
            AND backend.notification_endpoint IS NOT NULL
            AND (approval.id IS NULL OR approval.status <> $2 OR approval.expires_at <= $1 OR request.expires_at <= $1)
        ORDER BY request.id LIMIT $3
        """

    /// Claims request `id`'s notification until `leaseEnd`, when no instance holds it; false when another
    /// instance claimed it first, or it was sent meanwhile. The first claim notes when attempts began.
    func claimPing(_ id: String, at now: Date, leaseEnd: Date) async throws -> Bool {
        try await db.first("""
            UPDATE ciba_requests SET notify_due_at = $1, notify_first_attempt_at = COALESCE(notify_first_attempt_at, $2)
            WHERE id = $3 AND notified_at IS NULL AND (notify_due_at IS NULL OR notify_due_at <= $2)
            RETURNING id
            """, leaseEnd, now, id) != nil
    }

    /// Request `id`'s notification is done: delivered, or given up.
    func pinged(_ id: String, at now: Date) async throws {
        try await db.run("UPDATE ciba_requests SET notified_at = $1 WHERE id = $2", now, id)
    }

    /// Request `id`'s notification is tried again at `dueAt`.
    func retryPing(_ id: String, at dueAt: Date) async throws {
        try await db.run("UPDATE ciba_requests SET notify_due_at = $1 WHERE id = $2 AND notified_at IS NULL", dueAt, id)
    }

    func find(authReqHash: String) async throws -> CIBARequestRecord? {
        try await db.first(CIBARequestRecord.self, "SELECT * FROM ciba_requests WHERE auth_req_hash = $1", authReqHash)
    }

    /// Moves request `id`'s next poll to `next` if the poll at `now` is due; false when it is not, or when a
    /// poll made at the same moment moved it first.
    func movePoll(_ id: String, from now: Date, to next: Date) async throws -> Bool {
        try await db.first(
            "UPDATE ciba_requests SET next_poll_at = $1 WHERE id = $2 AND (next_poll_at IS NULL OR next_poll_at <= $3) RETURNING id",
            next, id, now) != nil
    }

    /// A poll came too soon: the client is told to wait `interval` seconds from now on.
    func slowDown(_ id: String, interval: Int, nextPollAt: Date) async throws {
        try await db.run("UPDATE ciba_requests SET poll_interval = $1, next_poll_at = $2 WHERE id = $3", interval, nextPollAt, id)
    }

    /// Marks request `id` redeemed; false when it already was (a second redemption, or one racing it).
    func redeem(_ id: String, at now: Date) async throws -> Bool {
        try await db.first("UPDATE ciba_requests SET redeemed_at = $1 WHERE id = $2 AND redeemed_at IS NULL RETURNING id", now, id) != nil
    }
}
