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

    /// Every config key the step reads; any other is refused at load, so that a misspelt key (say
    /// `display_web_opt`) cannot quietly leave a protection at its default. Keys every step takes (its
    /// tries, its output variables, its failure and cancel behaviour) are in `commonConfig`.
    var knownConfig: Set<String> {
        switch self {
        case .loginForm, .collectInformation: ["form_id", "schema"]
        case .createUser: ["external_user_id", "username", "email"]
        case .mobileBiometricsAuthentication: ["user_identifier"]
        case .mobileBiometricsTransactionSigning: ["external_user_id", "approval_data"]
        case .webToMobileAuthentication:
            [
                "external_user_id", "mobile_journey", "approval_data", "additional_data", "display_web_otp", "otp_length", "expires_in",
                "resend_attempts", "resend_interval", "polling_interval", "device_selection", "show_device_names", "unknown_user", "one_pending_per_user",
                "backoff_seconds", "backoff_max_seconds", "not_me_block_seconds",
            ]
        case .issueEnrollmentCode: ["expires_in"]
        case .reject: ["error_code", "message", "data"]
        case .mobileBiometricsRegistration, .deviceRegistration, .otpValidation, .enrollmentCode, .complete: []
        }
    }

    /// Config keys any step may take.
    static let commonConfig: Set<String> = [
        "max_attempts", "output_variable", "error_output_variable", "branch_output_variable", "failure_behavior", "cancel_behavior",
    ]

    /// Config keys that switch a protection on or off: they take `true` or `false` (or an expression),
    /// never a string such as `"true"` that would read as off.
    var switchConfig: [String] {
        switch self {
        case .webToMobileAuthentication: ["display_web_otp", "show_device_names", "one_pending_per_user"]
        default: []
        }
    }

    /// Config keys that name a journey, written as they are (no expression): anything but a name is
    /// refused at load, rather than the step falling back to a default journey.
    var nameConfig: [String] {
        switch self {
        case .webToMobileAuthentication: ["mobile_journey"]
        default: []
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
