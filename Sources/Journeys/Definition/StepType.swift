/// The kinds of step a journey can use, with what the loader needs to know about each.
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

    /// Configuration keys the step cannot run without. `create_user` needs one of two keys and says
    /// so in `requiredOneOf`.
    var requiredConfig: [String] {
        switch self {
        case .loginForm, .collectInformation: ["form_id", "schema"]
        case .webToMobileAuthentication: ["external_user_id", "mobile_journey"]
        case .mobileBiometricsTransactionSigning: ["external_user_id"]
        default: []
        }
    }

    /// Config keys that take one of a few words, with the words: anything else is refused at load, so a
    /// typo cannot quietly choose the default.
    var configChoices: [String: [String]] {
        switch self {
        case .webToMobileAuthentication: ["device_selection": ["ask", "most_recent"], "unknown_user": ["decoy", "reject"]]
        default: [:]
        }
    }

    /// Groups of keys of which at least one must be present.
    var requiredOneOf: [[String]] {
        switch self {
        case .createUser: [["external_user_id", "username", "email"]]
        default: []
        }
    }

    /// Whether only a phone can answer this step.
    var isPhoneOnly: Bool {
        switch self {
        case .mobileBiometricsRegistration, .deviceRegistration, .mobileBiometricsAuthentication, .mobileBiometricsTransactionSigning,
            .otpValidation, .enrollmentCode:
            true
        default: false
        }
    }

    /// Whether the journey ends at this step (it has no `next`).
    public var isTerminal: Bool {
        self == .complete || self == .reject
    }
}
