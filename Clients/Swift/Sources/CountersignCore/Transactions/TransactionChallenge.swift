import Crypto
import Foundation

/// The challenge a phone signs to approve a transaction (DESIGN.md §3, F15):
/// base64url(SHA-256("countersign-txn-v1" ‖ canonical JSON of the approval data ‖ nonce)).
public enum TransactionChallenge {
    static let domain = "countersign-txn-v1"

    /// The challenge for `approvalData` and the raw 32-byte `nonce`.
    public static func derive(approvalData: ApprovalData, nonce: [UInt8]) -> String {
        var hasher = SHA256()
        hasher.update(data: Data(domain.utf8))
        hasher.update(data: Data(approvalData.canonicalJSON.utf8))
        hasher.update(data: nonce)
        return LenientBase64.urlEncoded(hasher.finalize())
    }

    /// The challenge for a nonce as sent on the wire (base64url); nil when the nonce is not base64.
    public static func derive(approvalData: ApprovalData, nonceBase64URL: String) -> String? {
        guard let nonce = LenientBase64.decode(nonceBase64URL) else { return nil }
        return derive(approvalData: approvalData, nonce: Array(nonce))
    }
}
