/// The `journey_step_id` values clients switch on. Form steps use their own form id instead.
public enum JourneyStepID {
    public static let success = "action:success"
    public static let rejection = "action:rejection"
    public static let information = "action:information"
    public static let deviceRegistration = "device_registration"
    public static let mobileBiometricsRegistration = "mobile_biometrics_registration"
    public static let mobileBiometricsAuthentication = "mobile_biometrics_authentication"
    public static let mobileBiometricsTransactionSigning = "mobile_biometrics_transaction_signing"
    public static let otpValidation = "otp_validation"
    public static let mobileApproveAuthentication = "mobile_approve_authentication"
}

/// Stable error codes of the wire `error` object (DESIGN.md §2).
public enum ErrorCode {
    public static let clientResponseNotValid = "client_response_not_valid"
    public static let invalidCredentials = "invalid_credentials"
    public static let invalidApprovalData = "invalid_approval_data"
    public static let invalidToken = "invalid_token"
    public static let forbidden = "forbidden"
    public static let notFound = "not_found"
    public static let expired = "expired"
    public static let internalError = "internal_error"
    public static let cancelled = "cancelled"
    public static let rejected = "rejected"
    public static let userExists = "user_exists"
    public static let userNotFound = "user_not_found"
    /// The push provider said the device's token is no longer valid; the app must register it again.
    public static let pushTokenInvalid = "push_token_invalid"
}
