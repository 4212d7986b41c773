import SQLKit
import Foundation

/// Every statement on `used_device_signatures`: device signatures already accepted, each kept until it
/// could no longer be fresh, so it is accepted once. The expiry sweeper removes them after that.
struct UsedDeviceSignatureStore {
    static let table = "used_device_signatures"
    let sql: any SQLDatabase

    /// Records `fingerprint` (SHA-256 hex of what was signed and the signature's identity) until
    /// `expiresAt`, held with the call's writes; a fingerprint already recorded changes no row.
    func record(_ fingerprint: String, until expiresAt: Date) -> DeferredStatement {
        DeferredStatement(returningChangedRows: """
            INSERT INTO \(name: Self.table) (id, expires_at) VALUES (\(bind: fingerprint), \(bind: expiresAt))
            ON CONFLICT (id) DO NOTHING RETURNING id
            """)
    }
}
