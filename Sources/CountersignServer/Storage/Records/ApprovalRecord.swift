import CountersignCore
import Foundation
import Journeys
import SQLKit

/// A request for a phone to approve what a browser started. The web interaction waits on it; the
/// mobile approve journey settles it.
struct ApprovalRecord: Codable, Sendable, ClosableApproval {
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

    enum CodingKeys: String, CodingKey {
        case id, status, amr
        case applicationID = "application_id"
        case webClientID = "web_client_id"
        case nativeClientID = "native_client_id"
        case webInteractionID = "web_interaction_id"
        case webJourneyID = "web_journey_id"
        case mobileJourneyID = "mobile_journey_id"
        case userID = "user_id"
        case deviceID = "device_id"
        case failureCode = "failure_code"
        case authTime = "auth_time"
        case approvalData = "approval_data"
        case additionalData = "additional_data"
        case requestContext = "request_context"
        case correlationID = "correlation_id"
        case otpHash = "otp_hash"
        case otpLength = "otp_length"
        case otpAttemptsLeft = "otp_attempts_left"
        case expiresAt = "expires_at"
        case createdAt = "created_at"
        case subjectSequence = "subject_sequence"
        case sourceDigest = "source_digest"
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
struct ApprovalSubject: Sendable {
    /// The user the identifier names, if there is one.
    let userID: String?
    /// `DecoyApprovalRecord.subjectDigest` of the identifier.
    let decoyDigest: String
}

/// Where one approval (or decoy) stands, without the rest of its record.
struct ApprovalOutcomeRow: Sendable, ClosableApproval {
    /// The columns it is read from, which both tables have.
    static let columns = Column.allCases.map(\.rawValue).joined(separator: ", ")

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

    enum Column: String, CaseIterable {
        case id, status
        case webInteractionID = "web_interaction_id"
        case failureCode = "failure_code"
        case expiresAt = "expires_at"
        case createdAt = "created_at"
        case resolvedAt = "resolved_at"
        case subjectSequence = "subject_sequence"
        case sourceDigest = "source_digest"
    }

    /// Read column by column, not through SQLKit's `Codable` row decoder: the push-fatigue limits read
    /// up to 64 of these on every new approval, and that decoder's containers cost more than the values.
    init(_ row: any SQLRow) throws {
        func value<T: Decodable>(_ column: Column) throws -> T { try row.decode(column: column.rawValue, as: T.self) }
        func valueIfPresent<T: Decodable>(_ column: Column) throws -> T? {
            try row.decodeNil(column: column.rawValue) ? nil : value(column)
        }
        id = try value(.id)
        webInteractionID = try value(.webInteractionID)
        status = try value(.status)
        failureCode = try valueIfPresent(.failureCode)
        expiresAt = try value(.expiresAt)
        createdAt = try value(.createdAt)
        resolvedAt = try valueIfPresent(.resolvedAt)
        subjectSequence = try valueIfPresent(.subjectSequence)
        sourceDigest = try value(.sourceDigest)
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

/// What settling an approval needs of it (`ApprovalLifecycle.settle`): only what never changes once it is
/// created, so a copy read by an earlier call of the same phone's run serves as well as a fresh read.
/// Whether the approval is still open is the close's own compare-and-set.
struct ApprovalTerms: ClosableApproval {
    let id: String
    let webInteractionID: String
    let userID: String
    let deviceID: String
    /// The details shown in the browser, as canonical JSON; nil when there are none.
    let approvalData: String?

    init(_ approval: ApprovalRecord) {
        id = approval.id
        webInteractionID = approval.webInteractionID
        userID = approval.userID
        deviceID = approval.deviceID
        approvalData = approval.approvalData
    }
}
