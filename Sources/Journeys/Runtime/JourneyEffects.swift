import CountersignCore
import Foundation

/// Everything a journey does outside itself. The server implements it over its database and token
/// issuer; the interpreter stays free of storage and transport.
public protocol JourneyEffects: ApprovalEffects {
    /// The user with this external id among the users of the journey's application (that of its client),
    /// if there is one. A user of another application is not found: applications do not share users
    /// unless the admin links them.
    func findUser(externalUserID: String) async throws -> UserContext?
    /// Creates a user of the journey's application; the id is assigned by the store. Nil when the external
    /// id belongs to a user of another application, who joins this one only by an enrollment code or the
    /// admin's link.
    func createUser(externalUserID: String, email: String?) async throws -> UserContext?
    /// Uses up the enrollment code `code` for a phone registering through the journey's client and returns the user
    /// it was issued for (created if new, and from now on a user of the client's application); nil when
    /// the code is wrong, used, expired or for another client.
    func redeemEnrollmentCode(_ code: String) async throws -> UserContext?
    /// Issues a one-time enrollment code for `user`, redeemable through the native client of the
    /// application of the journey's (web) client for `lifetime` seconds; nil when that application has no
    /// native client.
    func issueEnrollmentCode(for user: UserContext, lifetime: TimeInterval) async throws -> IssuedEnrollmentCode?
    /// Makes the enrollment code with record id `id` unusable: the browser that showed it left its step
    /// without going on (cancelled it, reported a failure, took a branch).
    func withdrawEnrollmentCode(_ id: String) async throws
    /// Stores the biometric public keys a completed run registered, on the device `deviceID` when the run
    /// registered or used one; each replaces its user's earlier key with the same key id.
    func storeBiometricKeys(_ keys: [BiometricKeyRegistration], onDevice deviceID: String?) async throws
    /// The active biometric key with this client-chosen id of the user `externalUserID` finds (as
    /// `findUser` would), with that user; nil when either is unknown, when the key is revoked, or when
    /// the device it belongs to was revoked.
    func activeBiometricKey(externalUserID: String, publicKeyID: String) async throws -> BiometricCredential?
    /// Stores a device and returns the id the server assigned.
    func registerDevice(_ registration: DeviceRegistration) async throws -> String
    /// Signs the token a completed journey hands to its client.
    func issueToken(_ request: TokenRequest) async throws -> String
    /// Issues a credential for the browser of this (web) run, bound to `user` and the client's
    /// application, by which the push-fatigue limits tell the person's own browser from strangers';
    /// returns its secret, the only time it exists in clear.
    func rememberBrowser(of user: UserContext) async throws -> String
    /// Keeps a verified transaction signature as evidence; returns the evidence id.
    func recordTransactionSignature(_ signature: TransactionSignature) async throws -> String
}

/// A one-time enrollment code, the only time it exists in clear, ready to show: as text, as the link a
/// phone opens, and as that link's QR code.
public struct IssuedEnrollmentCode: Sendable {
    /// The code's record id (never shown: it is not the code).
    public let id: String
    public let code: String
    public let expiresAt: Date
    public let enrollmentURI: String
    /// The QR code of `enrollmentURI`, an SVG image.
    public let qrCodeSVG: String

    public init(id: String, code: String, expiresAt: Date, enrollmentURI: String, qrCodeSVG: String) {
        self.id = id
        self.code = code
        self.expiresAt = expiresAt
        self.enrollmentURI = enrollmentURI
        self.qrCodeSVG = qrCodeSVG
    }
}

/// A registered biometric key that may sign.
public struct BiometricCredential: Sendable {
    /// Whose key it is.
    public let user: UserContext
    public let key: VerifyingKey
    /// The device the key lives on, when its registration bound one.
    public let deviceID: String?

    public init(user: UserContext, key: VerifyingKey, deviceID: String?) {
        self.user = user
        self.key = key
        self.deviceID = deviceID
    }
}

/// A transaction the person signed, with everything needed to check the signature later.
public struct TransactionSignature: Sendable {
    public let user: UserContext
    public let deviceID: String?
    public let publicKeyID: String
    public let publicKey: VerifyingKey
    public let approvalData: ApprovalData
    /// The 32 random bytes, base64url without padding.
    public let nonce: String
    public let challenge: String
    /// The signature of the challenge's UTF-8 bytes, in the one form evidence keeps
    /// (`VerifiedSignature.canonicalBase64`: DER for ECDSA, however the phone wrote it).
    public let signature: String
    public let signedAt: Date
    public let journeyID: String
    /// The approval the signature settles, when it was made in a mobile approve journey.
    public let approvalID: String?
    /// For a backend client's request: the details and binding message signed
    /// (`AuthorizationRequestChallenge`), `approvalData` being empty.
    public var authorizationRequest: JSONValue? = nil
}

/// A biometric key a phone registered, kept in the run's state until the run completes.
public struct BiometricKeyRegistration: Codable, Sendable {
    public let userID: String
    /// The id the phone chose for the key.
    public let publicKeyID: String
    /// Base64 SPKI DER.
    public let publicKey: String
    /// `ec` or `rsa`.
    public let keyFamily: String
    public let os: String

    init(userID: String, publicKeyID: String, key: VerifyingKey, os: String) {
        self.userID = userID
        self.publicKeyID = publicKeyID
        self.publicKey = key.spkiBase64
        self.keyFamily = key.family.rawValue
        self.os = os
    }
}

/// A device a phone registered, proven by a signature of its device key.
public struct DeviceRegistration: Sendable {
    public let userID: String
    public let publicKey: VerifyingKey
    public let name: String
    public let model: String
    public let os: String
    public let pushChannel: PushChannel
    public let pushToken: String?
    public let pushAppID: String?
}

/// What a completed journey's token says.
public struct TokenRequest: Sendable {
    public let clientID: String
    public let user: UserContext
    public let amr: [String]
    public let authTime: Date?
    public let deviceID: String?
    public let journeyID: String
    /// Transaction details the person signed in this run.
    public let approvalData: ApprovalData?
}

/// The approval side of the effects: what the web-to-mobile step and the mobile approve journey need.
public protocol ApprovalEffects: Sendable {
    /// The user `externalUserID` finds (as `findUser` would), with their active devices, newest first;
    /// nil when there is no such user.
    func activeDevices(ofUser externalUserID: String) async throws -> (user: UserContext, devices: [DeviceSummary])?
    /// Creates a pending approval and pushes it to its device once the call commits; returns its id.
    func createApproval(_ request: ApprovalRequest) async throws -> String
    /// Creates a decoy for an identifier with no phone to ask: read, cancelled, superseded, limited and
    /// expired like an approval of `request`, pushed to no one and never approved; returns its id.
    func createDecoyApproval(_ request: DecoyApprovalRequest) async throws -> String
    /// The approval's state as read for this call; an approval past its expiry reads as `expired`.
    func approval(_ approvalID: String) async throws -> ApprovalSnapshot?
    /// Pushes the approval to its device again, within the rings cap of `limits`.
    func resendApproval(_ approvalID: String, limits: ApprovalLimits) async throws
    /// Ends a pending approval from the web side.
    func cancelApproval(_ approvalID: String) async throws
    /// Ends a pending approval from the phone side; an approval that is no longer pending is left as it is.
    func settleApproval(approvalID: String, outcome: ApprovalOutcome) async throws
    /// Checks a code typed on the phone against the approval's web OTP, using up one try when wrong.
    func checkApprovalOTP(approvalID: String, code: String) async throws -> OTPCheck
}

/// A device as the browser may list it.
public struct DeviceSummary: Sendable, Equatable {
    public let id: String
    public let name: String
    /// False once the push provider refused the device's token: pushes to it cannot arrive.
    public let canReceivePush: Bool

    public init(id: String, name: String, canReceivePush: Bool = true) {
        self.id = id
        self.name = name
        self.canReceivePush = canReceivePush
    }
}

/// What the web-to-mobile step asks for.
public struct ApprovalRequest: Sendable {
    public let user: UserContext
    public let deviceID: String
    /// The web client, whose application decides which native client the phone uses.
    public let clientID: String
    /// The web journey.
    public let journeyID: String
    /// The journey the phone runs.
    public let mobileJourneyID: String
    public let approvalData: ApprovalData?
    public let additionalData: JSONValue?
    public let correlationID: String?
    /// The web OTP, when the browser shows one; stored only as a keyed hash.
    public let otp: String?
    public let expiresAt: Date
    public let limits: ApprovalLimits

    public init(
        user: UserContext, deviceID: String, clientID: String, journeyID: String, mobileJourneyID: String, approvalData: ApprovalData?,
        additionalData: JSONValue?, correlationID: String?, otp: String?, expiresAt: Date, limits: ApprovalLimits
    ) {
        self.user = user
        self.deviceID = deviceID
        self.clientID = clientID
        self.journeyID = journeyID
        self.mobileJourneyID = mobileJourneyID
        self.approvalData = approvalData
        self.additionalData = additionalData
        self.correlationID = correlationID
        self.otp = otp
        self.expiresAt = expiresAt
        self.limits = limits
    }
}

/// What a decoy stands in for: an approval the browser waits on for `identifier`, who has no phone.
public struct DecoyApprovalRequest: Sendable {
    /// What the browser typed (an external user id or email).
    public let identifier: String
    /// The user the identifier names in the client's application, when the step found one (with no
    /// phone); nil leaves the server to look across applications.
    public let userID: String?
    /// The web client, whose application the identifier is looked for in.
    public let clientID: String
    public let expiresAt: Date
    public let limits: ApprovalLimits
}

/// How often one person may be asked to approve (push fatigue, DESIGN.md §6): set per web-to-mobile step.
public struct ApprovalLimits: Sendable, Equatable {
    /// At most one pending approval per user: a new request cancels the one waiting (the newest wins:
    /// the person at a browser now is the one the phone should hear from, and number matching keeps an
    /// attacker's newer request from being approved by mistake).
    public var onePendingPerUser: Bool
    /// After a request that was not approved (unanswered, denied, cancelled, replaced), the next one from
    /// the same source waits this long, doubling with each such request in a row up to `longestBackoff`;
    /// an approval resets it. Zero turns the backoff off.
    public var firstBackoff: TimeInterval
    public var longestBackoff: TimeInterval
    /// How long a "this wasn't me" report stops new requests from the source of the request reported.
    public var notMeBlock: TimeInterval
    /// How many times an hour requests from browsers the person has not signed in with may ring the
    /// phone (first pushes and resends); later ones wait in the phone's inbox without ringing. Zero
    /// turns the cap off.
    public var ringsPerHour: Int

    public static let defaults = ApprovalLimits(onePendingPerUser: true, firstBackoff: 10, longestBackoff: 3600, notMeBlock: 3600, ringsPerHour: 10)

    public init(onePendingPerUser: Bool, firstBackoff: TimeInterval, longestBackoff: TimeInterval, notMeBlock: TimeInterval, ringsPerHour: Int) {
        self.onePendingPerUser = onePendingPerUser
        self.firstBackoff = firstBackoff
        self.longestBackoff = longestBackoff
        self.notMeBlock = notMeBlock
        self.ringsPerHour = ringsPerHour
    }

    /// Whether a new request's admission depends on the user's earlier requests (one pending per user, the
    /// backoff), so that two requests made at once must not both be admitted on the same history.
    public var dependOnEarlierRequests: Bool {
        onePendingPerUser || firstBackoff > 0
    }

    /// How long to wait after the newest of `unapprovedInARow` requests that were not approved.
    public func backoff(afterUnapproved unapprovedInARow: Int) -> TimeInterval {
        guard unapprovedInARow > 0, firstBackoff > 0 else { return 0 }
        return min(firstBackoff * pow(2, Double(min(unapprovedInARow - 1, 30))), longestBackoff)
    }
}

/// Where an approval stands.
public enum ApprovalStatus: String, Sendable, Codable {
    case pending
    case approved
    case denied
    case failed
    case cancelled
    case expired
}

/// An approval as the journeys see it.
public struct ApprovalSnapshot: Sendable {
    public let id: String
    public let status: ApprovalStatus
    /// The user and device asked; nil for a decoy (`ApprovalEffects.createDecoyApproval`), which asks no one.
    public let user: UserContext?
    public let deviceID: String?
    /// Methods the phone proved, once approved.
    public let amr: [String]
    public let authTime: Date?
    /// Why the approval failed, when it did.
    public let failureCode: String?
    public let expiresAt: Date
    public let approvalData: ApprovalData?
    /// Digits of the web OTP, when there is one.
    public let otpLength: Int?
    public let otpAttemptsLeft: Int
    /// Where the latest push of the approval stands: `queued`, `sent` or `failed`.
    public let pushStatus: String?

    public init(
        id: String, status: ApprovalStatus, user: UserContext?, deviceID: String?, amr: [String], authTime: Date?,
        failureCode: String?, expiresAt: Date, approvalData: ApprovalData?, otpLength: Int?, otpAttemptsLeft: Int,
        pushStatus: String? = nil
    ) {
        self.id = id
        self.status = status
        self.user = user
        self.deviceID = deviceID
        self.amr = amr
        self.authTime = authTime
        self.failureCode = failureCode
        self.expiresAt = expiresAt
        self.approvalData = approvalData
        self.otpLength = otpLength
        self.otpAttemptsLeft = otpAttemptsLeft
        self.pushStatus = pushStatus
    }
}

/// How a mobile approve journey ended.
public enum ApprovalOutcome: Sendable, Equatable {
    /// `signedApprovalData`, `signedAuthorizationRequest`: what the phone's transaction signature covered,
    /// if it signed one.
    case approved(amr: [String], authTime: Date, signedApprovalData: ApprovalData?, signedAuthorizationRequest: String? = nil)
    case denied
    /// Denied with "this wasn't me": the person did not start the request.
    case deniedNotMine
    case failed(code: String)

    /// Methods that authenticate the person; the device key (`hwk`) alone does not.
    public static let authenticationMethods: Set<String> = ["mobile_biometrics", "code_otp"]
}

/// The result of checking a web OTP typed on the phone.
public enum OTPCheck: Sendable, Equatable {
    case valid
    case invalid(attemptsLeft: Int)
    /// The last try was wrong: the approval has failed.
    case exhausted
}
