import CountersignCore
import Crypto
import Foundation
import Journeys

/// What a browser waits on when the identifier it typed has no phone to ask: stored like an approval, so
/// it ends as an unanswered one would (expired), can be cancelled or superseded, and counts toward the
/// same push-fatigue limits, per identifier. No push is sent and no phone can answer it. Its id never
/// leaves the server (it is kept in the interaction's sealed state).
struct DecoyApprovalRecord: Codable, Sendable {
    static let idPrefix = "dcy"

    let id: String
    let applicationID: String
    /// Keyed hash of the identifier, exactly as the user lookup took it: whose limits it counts toward.
    let subjectDigest: String
    let webInteractionID: String
    let status: String
    let failureCode: String?
    let expiresAt: Date
    let createdAt: Date
    let resolvedAt: Date?
    /// Its number among the identifier's decoys (`ApprovalLimiter`).
    let subjectSequence: Int?
    /// Where its request came from (`RequestSource`).
    let sourceDigest: String

    enum CodingKeys: String, CodingKey {
        case id, status
        case applicationID = "application_id"
        case subjectDigest = "subject_digest"
        case webInteractionID = "web_interaction_id"
        case failureCode = "failure_code"
        case expiresAt = "expires_at"
        case createdAt = "created_at"
        case resolvedAt = "resolved_at"
        case subjectSequence = "subject_sequence"
        case sourceDigest = "source_digest"
    }

    static func isDecoy(_ approvalID: String) -> Bool {
        approvalID.hasPrefix(idPrefix + "_")
    }

    /// The subject of decoys for `identifier` in application `applicationID`, under the server's hash key:
    /// a stranger's requests through another application's client do not count against the person's
    /// sign-ins here. Taken in its canonical form, as a user's is stored: one history for an email however
    /// it is spelt, as a registered user's.
    static func subjectDigest(identifier: String, applicationID: String, key: SymmetricKey) -> String {
        SecretDigest.keyedHex("decoy\n\(applicationID)\n\(ExternalUserID.canonical(identifier))", key: key)
    }
}
