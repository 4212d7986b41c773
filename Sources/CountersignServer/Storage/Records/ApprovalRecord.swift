import CountersignCore
import FluentSQL
import Foundation
import Journeys

/// A request for a phone to approve what a browser started. The web interaction waits on it; the
/// mobile approve journey settles it.
///
/// Read and written with plain SQL (see `InteractionRecord`): browsers, phones and the push sender
/// all read approvals on every call.
struct ApprovalRecord: Codable, Sendable {
    static let schema = "approvals"

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
    let correlationID: String?
    /// Keyed hash of the web OTP; the code itself is never stored here.
    let otpHash: String?
    let otpLength: Int?
    let otpAttemptsLeft: Int
    let expiresAt: Date
    let createdAt: Date

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
        case correlationID = "correlation_id"
        case otpHash = "otp_hash"
        case otpLength = "otp_length"
        case otpAttemptsLeft = "otp_attempts_left"
        case expiresAt = "expires_at"
        case createdAt = "created_at"
    }

    static func find(_ id: String, on sql: any SQLDatabase) async throws -> ApprovalRecord? {
        try await sql.raw("SELECT * FROM \(ident: schema) WHERE id = \(bind: id)").first(decoding: ApprovalRecord.self)
    }

    /// The approval with its user and the status of its latest push, in one query: what a waiting
    /// browser reads on every poll.
    static func snapshot(_ id: String, at now: Date, on sql: any SQLDatabase) async throws -> ApprovalSnapshot? {
        guard let row = try await sql.raw("""
            SELECT a.*, u.external_user_id, u.email,
                (SELECT p.status FROM push_jobs p WHERE p.approval_id = a.id ORDER BY p.created_at DESC LIMIT 1) AS push_status
            FROM \(ident: schema) a JOIN users u ON u.id = a.user_id
            WHERE a.id = \(bind: id)
            """).first()
        else { return nil }
        let approval = try row.decode(model: ApprovalRecord.self)
        let user = UserContext(
            userID: approval.userID, externalUserID: try row.decode(column: "external_user_id", as: String.self),
            email: try row.decode(column: "email", as: String?.self))
        return ApprovalSnapshot(
            id: id, status: approval.status(at: now), user: user, deviceID: approval.deviceID,
            amr: approval.amr.split(separator: ",").map(String.init), authTime: approval.authTime, failureCode: approval.failureCode,
            expiresAt: approval.expiresAt, approvalData: try approval.approvalData.map(ApprovalData.init(jsonText:)),
            otpLength: approval.otpLength, otpAttemptsLeft: approval.otpAttemptsLeft,
            pushStatus: try row.decode(column: "push_status", as: String?.self))
    }

    func insert(on sql: any SQLDatabase) async throws {
        try await sql.insert(into: Self.schema).model(self).run()
    }

    /// The status as of `now`: a pending approval past its expiry reads as expired.
    func status(at now: Date) -> ApprovalStatus {
        Self.status(stored: status, expiresAt: expiresAt, at: now)
    }

    private static func status(stored: String, expiresAt: Date, at now: Date) -> ApprovalStatus {
        let stored = ApprovalStatus(rawValue: stored) ?? .failed
        return stored == .pending && now >= expiresAt ? .expired : stored
    }

    /// The status of approval `id` as of `now`; a vanished approval reads as expired.
    static func status(of id: String, at now: Date, on sql: any SQLDatabase) async throws -> ApprovalStatus {
        struct Row: Decodable {
            let status: String
            let expiresAt: Date
            enum CodingKeys: String, CodingKey {
                case status
                case expiresAt = "expires_at"
            }
        }
        guard let row = try await sql.raw("SELECT status, expires_at FROM \(ident: schema) WHERE id = \(bind: id)").first(decoding: Row.self)
        else { return .expired }
        return status(stored: row.status, expiresAt: row.expiresAt, at: now)
    }

    /// Counts one wrong web OTP if `attemptsLeftSeen` is still the count (compare and set); returns whether it did.
    static func countWrongOTP(_ id: String, attemptsLeftSeen seen: Int, on sql: any SQLDatabase) async throws -> Bool {
        try await !sql.raw("""
            UPDATE \(ident: schema) SET otp_attempts_left = \(bind: seen - 1)
            WHERE id = \(bind: id) AND otp_attempts_left = \(bind: seen)
            RETURNING id
            """).all().isEmpty
    }

    /// Ends the approval if it is still open: pending and not past its expiry. Returns whether this
    /// call ended it; an approval already settled, cancelled or expired is left as it is.
    @discardableResult
    static func close(
        _ approvalID: String, as status: ApprovalStatus, failureCode: String?, amr: [String] = [], authTime: Date? = nil,
        at now: Date, on sql: any SQLDatabase
    ) async throws -> Bool {
        let closed = try await sql.raw("""
            UPDATE \(ident: schema)
            SET status = \(bind: status.rawValue), failure_code = \(bind: failureCode), amr = \(bind: amr.joined(separator: ",")),
                auth_time = \(bind: authTime), resolved_at = \(bind: now)
            WHERE id = \(bind: approvalID) AND status = \(bind: ApprovalStatus.pending.rawValue) AND expires_at > \(bind: now)
            RETURNING id
            """).all()
        return !closed.isEmpty
    }
}
