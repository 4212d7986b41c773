import Foundation

/// Every statement on `used_device_signatures`: device signatures already accepted, each kept until it
/// could no longer be fresh, so it is accepted once. The expiry sweeper removes them after that.
struct UsedDeviceSignatureStore {
    static let table = "used_device_signatures"
    let db: any SQLExecutor

    /// Records `fingerprint` (SHA-256 hex of what was signed and the signature's identity) until
    /// `expiresAt`, held with the call's writes; a fingerprint already recorded changes no row.
    func record(_ fingerprint: String, until expiresAt: Date) -> DeferredStatement {
        DeferredStatement(returningChangedRows: BoundStatement("""
            INSERT INTO used_device_signatures (id, expires_at) VALUES ($1, $2)
            ON CONFLICT (id) DO NOTHING RETURNING id
            """, fingerprint, expiresAt))
    }
}
