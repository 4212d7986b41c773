import CountersignCore
import Foundation
import JWTKit

/// The claims of every token Countersign issues (DESIGN.md §3). Times are whole seconds.
public struct TokenClaims: JWTPayload, Equatable {
    public var iss: String
    public var aud: String
    public var sub: String
    public var externalUserID: String
    public var iat: Int
    public var exp: Int
    public var authTime: Int?
    public var jti: String
    /// `mobile_biometrics`, `hwk`, `code_otp`, and `mfa` when two or more were proven.
    public var amr: [String]
    public var deviceID: String?
    public var journeyID: String
    /// The details signed on the phone, for transaction signing journeys.
    public var approvalData: ApprovalData?

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, iat, exp, jti, amr
        case externalUserID = "external_user_id"
        case authTime = "auth_time"
        case deviceID = "device_id"
        case journeyID = "journey_id"
        case approvalData = "approval_data"
    }

    /// Checks expiry; callers check `iss` and `aud` against what they expect.
    public func verify(using algorithm: some JWTAlgorithm) async throws {
        guard Date().timeIntervalSince1970 < TimeInterval(exp) else {
            throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "expired")
        }
    }
}
