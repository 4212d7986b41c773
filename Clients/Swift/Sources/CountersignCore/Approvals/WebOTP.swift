import Crypto
import Foundation

/// The one-time code the browser shows and the person types on the phone (DESIGN.md §3).
///
/// The approval keeps only a keyed hash bound to its id, so the code is useless for any other
/// approval. The code itself is part of what the browser's waiting step shows, so it stays in that
/// interaction's state (shown again on every poll, sealed at rest) until the step ends.
public enum WebOTP {
    public static let defaultLength = 6

    /// A code of `length` decimal digits from the system CSPRNG, uniformly distributed.
    public static func generate(length: Int = defaultLength) -> String {
        SecureRandom.string(length: length, from: Array("0123456789"))
    }

    /// HMAC-SHA256 of the code bound to `approvalID`, hex encoded.
    public static func keyedHash(code: String, approvalID: String, key: SymmetricKey) -> String {
        SecretDigest.keyedHex("\(approvalID)\n\(code)", key: key)
    }

    /// Whether `code` is the one hashed into `storedHash` for `approvalID`, compared in constant time.
    public static func matches(code: String, approvalID: String, storedHash: String, key: SymmetricKey) -> Bool {
        ConstantTime.equals(Array(keyedHash(code: code, approvalID: approvalID, key: key).utf8), Array(storedHash.utf8))
    }
}
