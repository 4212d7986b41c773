import Foundation

/// Every statement on `ciba_requests`: backend clients' requests for approvals, found by their
/// `auth_req_id`'s hash, redeemed once.
struct CIBARequestStore {
    let db: any SQLExecutor

    /// Adds `request`, held with the call's writes (with its approval).
    func insert(_ request: CIBARequestRecord) -> DeferredStatement {
        DeferredStatement(BoundStatement("""
            INSERT INTO ciba_requests (
                id, auth_req_hash, client_id, user_id, approval_id, scope, notification_token, poll_interval, next_poll_at,
                expires_at, created_at, redeemed_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            """,
            request.id, request.authReqHash, request.clientID, request.userID, request.approvalID, request.scope,
            request.notificationToken, request.pollInterval, request.nextPollAt, request.expiresAt, request.createdAt,
            request.redeemedAt))
    }

    func find(authReqHash: String) async throws -> CIBARequestRecord? {
        try await db.first(CIBARequestRecord.self, "SELECT * FROM ciba_requests WHERE auth_req_hash = $1", authReqHash)
    }

    /// Sets when request `id` may next be polled, and the interval the client was told.
    func schedulePoll(_ id: String, at nextPollAt: Date, interval: Int) async throws {
        try await db.run("UPDATE ciba_requests SET next_poll_at = $1, poll_interval = $2 WHERE id = $3", nextPollAt, interval, id)
    }

    /// Marks request `id` redeemed; false when it already was (a second redemption, or one racing it).
    func redeem(_ id: String, at now: Date) async throws -> Bool {
        try await db.first("UPDATE ciba_requests SET redeemed_at = $1 WHERE id = $2 AND redeemed_at IS NULL RETURNING id", now, id) != nil
    }
}
