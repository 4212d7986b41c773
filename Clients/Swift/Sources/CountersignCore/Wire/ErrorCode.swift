/// Every code the wire `error` object carries (DESIGN.md §2): the one list clients switch on.
public enum ErrorCode {
    // The request itself
    public static let clientResponseNotValid = "client_response_not_valid"
    /// A body not sent as `application/json` (415).
    public static let unsupportedMediaType = "unsupported_media_type"
    public static let invalidApprovalData = "invalid_approval_data"
    public static let invalidPushConfig = "invalid_push_config"
    public static let notFound = "not_found"
    public static let alreadyExists = "already_exists"
    /// Polling faster than the step's `polling_interval` (429 with `Retry-After`).
    public static let slowDown = "slow_down"
    public static let internalError = "internal_error"

    // Who is asking
    public static let invalidClient = "invalid_client"
    public static let invalidToken = "invalid_token"
    public static let invalidCredentials = "invalid_credentials"
    public static let forbidden = "forbidden"
    /// The console session ended (signed out, idle, or past its lifetime): sign in again.
    public static let sessionEnded = "session_ended"
    /// A page on an origin its client's application does not list called the API (CORS).
    public static let originNotAllowed = "origin_not_allowed"
    public static let timestampOutOfRange = "timestamp_out_of_range"
    public static let signatureReplayed = "signature_replayed"
    public static let deviceRevoked = "device_revoked"
    public static let deviceNotOwned = "device_not_owned"
    public static let deviceNotSelected = "device_not_selected"
    public static let clientNotInApplication = "client_not_in_application"
    /// The journey is not one this client may start (web journeys from web clients, phone journeys from
    /// native clients, mobile approve journeys only from a push).
    public static let journeyNotForClient = "journey_not_for_client"

    // Interactions and journeys
    public static let expired = "expired"
    public static let cancelled = "cancelled"
    public static let rejected = "rejected"
    public static let clientFailure = "client_failure"
    public static let userExists = "user_exists"
    public static let userNotFound = "user_not_found"
    /// A registration named a user who already exists, without an enrollment code or a registered
    /// phone's approval.
    public static let enrollmentRequired = "enrollment_required"
    public static let notWaiting = "not_waiting"

    // Approvals
    public static let unknownClient = "unknown_client"
    public static let noNativeClient = "no_native_client"
    public static let noRegisteredDevices = "no_registered_devices"
    public static let unknownDeviceCode = "unknown_device_code"
    public static let resendLimitReached = "resend_limit_reached"
    /// A resend sooner than the step's `resend_interval` after the last push: the step is repeated.
    public static let resendTooSoon = "resend_too_soon"
    public static let approvalClosed = "approval_closed"
    /// A newer request for the same user replaced this one (one pending approval per user).
    public static let approvalSuperseded = "approval_superseded"
    /// Too many requests for this user, or the user reported one as not theirs: 429 with `Retry-After`.
    public static let rateLimited = "rate_limited"
    /// Too many event streams or inbox long-polls held open (per interaction, per device, or in all): 429.
    public static let tooManyWaits = "too_many_waits"
    public static let mobileRejected = "mobile_rejected"
    public static let mobileNotAuthenticated = "mobile_not_authenticated"
    public static let approvalDataNotSigned = "approval_data_not_signed"
    public static let otpNotAvailable = "otp_not_available"
    public static let otpAttemptsExceeded = "otp_attempts_exceeded"
    public static let otpAttemptConflict = "otp_attempt_conflict"
    /// The push provider said the device's token is no longer valid; the app must register it again.
    public static let pushTokenInvalid = "push_token_invalid"

    /// The database cannot be reached for the moment (503 with `Retry-After`); nothing was changed.
    public static let databaseUnavailable = "database_unavailable"
    /// `POST /admin/v1/backups` on a server whose database is backed up with its own tools (PostgreSQL).
    public static let backupNotAvailable = "backup_not_available"
    /// `POST /admin/v1/backups` could not write the copy; the message names the directory and why.
    public static let backupFailed = "backup_failed"
    /// `GET /readyz`: this instance cannot serve requests now (its database or its notifications are down).
    public static let notReady = "not_ready"

    /// A refusal of the HTTP layer itself that none of the codes above names (a wrong method, an
    /// oversized body): `http_` and the status code, e.g. `http_405`.
    public static func http(status: Int) -> String { "http_\(status)" }
}
