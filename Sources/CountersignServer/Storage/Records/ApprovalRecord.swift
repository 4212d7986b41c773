import CountersignCore
import Foundation
import Journeys

/// A request for a phone to approve what a browser started. The web interaction waits on it; the
/// mobile approve journey settles it.
struct ApprovalRecord: Sendable, ClosableApproval {
    /// The failure code of an approval denied as "this wasn't me": the push-fatigue limits read it.
    static let deniedAsNotMine = "not_me"

    let id: String
    let applicationID: String
    let webClientID: String
    /// The native client the phone must use (same application).
    let nativeClientID: String
    let webInteractionID: String
    let webJourneyID: String
    let mobileJourneyID: String
    let userID: String
    let deviceID: String
    let status: String
    let failureCode: String?
    /// Methods the phone proved, comma separated.
    let amr: String
    let authTime: Date?
    /// JSON text.
    let approvalData: String?
    /// JSON text.
    let additionalData: String?
    /// JSON text: where the web request came from (`RequestOrigin.context`), for the phone to show.
    let requestContext: String?
    let correlationID: String?
    /// Keyed hash of the web OTP; the code itself is never stored here.
    let otpHash: String?
    let otpLength: Int?
    let otpAttemptsLeft: Int
    let expiresAt: Date
    let createdAt: Date
    /// Its number among the user's approvals (`ApprovalLimiter`); nil when the limits did not depend on
    /// earlier requests.
    let subjectSequence: Int?
    /// Where its request came from (`RequestSource`).
    let sourceDigest: String
    /// For a request of a backend client (OpenID CIBA): what the phone shows and signs, as RFC 8785
    /// canonical JSON of `{"authorization_details": […], "binding_message": "…"}`.
    let authorizationRequest: String?

    /// Its columns, in the order `insertBinds` binds them.
    static let columns = """
        id, application_id, web_client_id, native_client_id, web_interaction_id, web_journey_id, mobile_journey_id, user_id, \
        device_id, status, failure_code, amr, auth_time, approval_data, additional_data, request_context, correlation_id, \
        otp_hash, otp_length, otp_attempts_left, expires_at, created_at, subject_sequence, source_digest, authorization_request
        """

    var insertBinds: [SQLValue] {
        let values: [any SQLBindable] = [id, applicationID, webClientID, nativeClientID, webInteractionID, webJourneyID, mobileJourneyID, userID, deviceID, status,
         failureCode, amr, authTime, approvalData, additionalData, requestContext, correlationID, otpHash, otpLength,
         otpAttemptsLeft, expiresAt, createdAt, subjectSequence, sourceDigest, authorizationRequest]
        return values.map(\.sqlValue)
    }

    /// The status as of `now`: a pending approval past its expiry reads as expired.
    func status(at now: Date) -> ApprovalStatus {
        Self.status(stored: status, expiresAt: expiresAt, at: now)
    }

    static func status(stored: String, expiresAt: Date, at now: Date) -> ApprovalStatus {
        let stored = ApprovalStatus(rawValue: stored) ?? .failed
        return stored == .pending && now >= expiresAt ? .expired : stored
    }
}

/// Whose requests the push-fatigue limits count: one history per identifier, whichever path a request
/// took — the approvals of the user it names (in any application) and the decoys made for it — so that
/// an identifier's limits never tell whether it has a phone.
extension ApprovalRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        applicationID = try row["application_id"]
        webClientID = try row["web_client_id"]
        nativeClientID = try row["native_client_id"]
        webInteractionID = try row["web_interaction_id"]
        webJourneyID = try row["web_journey_id"]
        mobileJourneyID = try row["mobile_journey_id"]
        userID = try row["user_id"]
        deviceID = try row["device_id"]
        status = try row["status"]
        failureCode = try row["failure_code"]
        amr = try row["amr"]
        authTime = try row["auth_time"]
        approvalData = try row["approval_data"]
        additionalData = try row["additional_data"]
        requestContext = try row["request_context"]
        correlationID = try row["correlation_id"]
        otpHash = try row["otp_hash"]
        otpLength = try row["otp_length"]
        otpAttemptsLeft = try row["otp_attempts_left"]
        expiresAt = try row["expires_at"]
        createdAt = try row["created_at"]
        subjectSequence = try row["subject_sequence"]
        sourceDigest = try row["source_digest"]
        authorizationRequest = try row["authorization_request"]
    }
}

struct ApprovalSubject: Sendable {
    /// The user the identifier names, if there is one.
    let userID: String?
    /// `DecoyApprovalRecord.subjectDigest` of the identifier.
    let decoyDigest: String
}

/// Where one approval (or decoy) stands, without the rest of its record.
struct ApprovalOutcomeRow: Sendable, ClosableApproval {
    /// The columns it is read from, which both tables have.
    static let columns = "id, web_interaction_id, status, failure_code, expires_at, created_at, resolved_at, subject_sequence, source_digest"

    let id: String
    let webInteractionID: String
    let status: String
    let failureCode: String?
    let expiresAt: Date
    let createdAt: Date
    let resolvedAt: Date?
    /// Its number in its subject's history: among the user's approvals, or the identifier's decoys.
    let subjectSequence: Int?
    /// Where its request came from (`RequestSource`).
    let sourceDigest: String

    func status(at now: Date) -> ApprovalStatus {
        ApprovalRecord.status(stored: status, expiresAt: expiresAt, at: now)
    }

    init(_ row: DatabaseRow) throws {
        id = try row["id"]
        webInteractionID = try row["web_interaction_id"]
        status = try row["status"]
        failureCode = try row["failure_code"]
        expiresAt = try row["expires_at"]
        createdAt = try row["created_at"]
        resolvedAt = try row["resolved_at"]
        subjectSequence = try row["subject_sequence"]
        sourceDigest = try row["source_digest"]
    }

    /// When the person denied this approval as "this wasn't me", if they did.
    var reportedNotMineAt: Date? {
        failureCode == ApprovalRecord.deniedAsNotMine ? resolvedAt : nil
    }
}

/// What closing an approval needs: which one, and which browser waits on it.
protocol ClosableApproval: Sendable {
    var id: String { get }
    var webInteractionID: String { get }
}
