import CountersignCore
import Crypto
import Foundation

/// What a browser waits on when the identifier it typed has no phone to ask: stored like an approval, so
/// it ends as an unanswered one would (expired), can be cancelled or superseded, and counts toward the
/// same push-fatigue limits, per identifier. No push is sent and no phone can answer it. Its id never
/// leaves the server (it is kept in the interaction's sealed state).
struct DecoyApprovalRecord: Codable, Sendable {
    static let idPrefix = "dcy"
    /// Decoys outlive their expiry by the default longest backoff, so the backoff still sees them.
    static let keptAfterExpiry: TimeInterval = 3600

    let id: String
    let applicationID: String
    /// Keyed hash of the application and the identifier as typed (lower-cased): who the limits count for.
    let subjectDigest: String
    let webInteractionID: String
    let status: String
    let failureCode: String?
    let expiresAt: Date
    let createdAt: Date
    let resolvedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, status
        case applicationID = "application_id"
        case subjectDigest = "subject_digest"
        case webInteractionID = "web_interaction_id"
        case failureCode = "failure_code"
        case expiresAt = "expires_at"
        case createdAt = "created_at"
        case resolvedAt = "resolved_at"
    }

    static func isDecoy(_ approvalID: String) -> Bool {
        approvalID.hasPrefix(idPrefix + "_")
    }

    /// The subject of decoys for `identifier` in `applicationID`, under the server's hash key.
    static func subjectDigest(identifier: String, applicationID: String, key: SymmetricKey) -> String {
        SecretDigest.keyedHex("decoy\n\(applicationID)\n\(identifier.lowercased())", key: key)
    }
}
