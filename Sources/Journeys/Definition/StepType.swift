/// The kinds of step a journey can use.
public enum StepType: String, Sendable, CaseIterable {
    case loginForm = "login_form"
    case collectInformation = "collect_information"
    case createUser = "create_user"
    case mobileBiometricsRegistration = "mobile_biometrics_registration"
    case deviceRegistration = "device_registration"
    case mobileBiometricsAuthentication = "mobile_biometrics_authentication"
    case mobileBiometricsTransactionSigning = "mobile_biometrics_transaction_signing"
    case webToMobileAuthentication = "web_to_mobile_authentication"
    case otpValidation = "otp_validation"
    case enrollmentCode = "enrollment_code"
    case issueEnrollmentCode = "issue_enrollment_code"
    case complete
    case reject

    /// The step's behaviour, which declares the configuration it takes: the one list of the step types' code.
    var behavior: any StepBehavior {
        switch self {
        case .loginForm, .collectInformation: FormStep()
        case .createUser: CreateUserStep()
        case .mobileBiometricsRegistration: BiometricsRegistrationStep()
        case .deviceRegistration: DeviceRegistrationStep()
        case .mobileBiometricsAuthentication: BiometricsAuthenticationStep()
        case .mobileBiometricsTransactionSigning: TransactionSigningStep()
        case .complete: CompleteStep()
        case .reject: RejectStep()
        case .webToMobileAuthentication: WebToMobileAuthenticationStep()
        case .otpValidation: OTPValidationStep()
        case .enrollmentCode: EnrollmentCodeStep()
        case .issueEnrollmentCode: IssueEnrollmentCodeStep()
        }
    }

    /// Whether the journey ends at this step (it has no `next`).
    public var isTerminal: Bool {
        self == .complete || self == .reject
    }
}
