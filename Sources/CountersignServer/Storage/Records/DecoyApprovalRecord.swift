import CountersignCore
import Crypto
import Foundation
import Journeys

/// What a browser waits on when the identifier it typed has no phone to ask: stored like an approval, so
/// it ends as an unanswered one would (expired), can be cancelled or superseded, and counts toward the
/// same push-fatigue limits, per identifier. No push is sent and no phone can answer it. Its id never
/// leaves the server (it is kept in the interaction's sealed state).
struct DecoyApprovalRecord: Sendable {
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

    /// Its columns, in the order `insertBinds` binds them.
    static let columns = """
        id, application_id, subject_digest, web_interaction_id, status, failure_code, expires_at, created_at, resolved_at, \
        subject_sequence, source_digest
        """

    var insertBinds: [SQLValue] {
        let values: [any SQLBindable] = [id, applicationID, subjectDigest, webInteractionID, status, failureCode, expiresAt, createdAt, resolvedAt, subjectSequence,
         sourceDigest]
        return values.map(\.sqlValue)
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
