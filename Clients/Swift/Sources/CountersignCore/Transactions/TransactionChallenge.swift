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

    /// The challenge for a nonce as sent on the wire (`nonceBytes(of:)`); nil for any other nonce.
    public static func derive(approvalData: ApprovalData, nonceBase64URL: String) -> String? {
        nonceBytes(of: nonceBase64URL).map { derive(approvalData: approvalData, nonce: $0) }
    }

    /// The nonce's bytes when `text` is 32 bytes written as the server writes them (base64url without
    /// padding): the only nonce whose signature verifies as evidence. Nil otherwise.
    public static func nonceBytes(of text: String) -> [UInt8]? {
        guard let bytes = LenientBase64.decode(text), bytes.count == 32, LenientBase64.urlEncoded(bytes) == text else { return nil }
        return Array(bytes)
    }
}
