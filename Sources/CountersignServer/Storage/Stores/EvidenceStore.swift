import Foundation

/// Every statement on `transaction_evidence`. Evidence is never deleted.
struct EvidenceStore {
    static let table = "transaction_evidence"
    let db: any SQLExecutor

    func insert(_ evidence: TransactionEvidenceRecord) async throws {
        try await db.run("""
            INSERT INTO transaction_evidence (
                id, user_id, external_user_id, device_id, public_key_id, public_key, approval_data, nonce, challenge,
                signature, journey_id, approval_id, signed_at, seal, authorization_request)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
            """,
            evidence.id, evidence.userID, evidence.externalUserID, evidence.deviceID, evidence.publicKeyID, evidence.publicKey,
            evidence.approvalData, evidence.nonce, evidence.challenge, evidence.signature, evidence.journeyID,
            evidence.approvalID, evidence.signedAt, evidence.seal, evidence.authorizationRequest)
    }

    func find(_ id: String) async throws -> TransactionEvidenceRecord? {
        try await db.first(TransactionEvidenceRecord.self, "SELECT * FROM transaction_evidence WHERE id = $1", id)
    }

    /// Evidence newest first, optionally of one user or approval.
    ///
    /// Ordered by `signed_at`, then `id`; with `after` (the id of the last row of the page before) it
    /// continues after that row, so pages neither repeat nor skip a row whatever is added meanwhile, and an
    /// `after` that names no evidence gives no rows. Neither filter has an index of its own (the listing walks
    /// the newest-first one), so a filter not given is a NULL parameter rather than a statement of its own.
    func newest(userID: String?, approvalID: String?, after: String?, limit: Int) async throws -> [TransactionEvidenceRecord] {
        if let after {
            try await db.all(TransactionEvidenceRecord.self, Self.newestAfter, userID, approvalID, after, limit)
        } else {
            try await db.all(TransactionEvidenceRecord.self, Self.newest, userID, approvalID, limit)
        }
    }

    private static let newest = """
        SELECT * FROM transaction_evidence
        WHERE (CAST($1 AS TEXT) IS NULL OR user_id = $1) AND (CAST($2 AS TEXT) IS NULL OR approval_id = $2)
        ORDER BY signed_at DESC, id DESC LIMIT $3
        """

    private static let newestAfter = """
        SELECT * FROM transaction_evidence
        WHERE (CAST($1 AS TEXT) IS NULL OR user_id = $1) AND (CAST($2 AS TEXT) IS NULL OR approval_id = $2)
            AND (signed_at, id) < (SELECT signed_at, id FROM transaction_evidence WHERE id = $3)
        ORDER BY signed_at DESC, id DESC LIMIT $4
        """
}
