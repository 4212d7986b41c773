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
    public static let enrollmentCode = "enrollment_code"
    public static let enrollmentCodeIssued = "enrollment_code_issued"
    public static let mobileApproveAuthentication = "mobile_approve_authentication"
}
