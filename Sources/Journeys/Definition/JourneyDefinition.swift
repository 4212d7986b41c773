import CountersignCore

/// A validated journey: its steps, where it starts, and how steps connect.
public struct JourneyDefinition: Sendable {
    public let id: String
    public let name: String
    /// `development_only: true`: a demo journey that trusts what the client tells it (such as an email
    /// naming an existing user). Only a development start loads it.
    public let developmentOnly: Bool
    /// The id of the first step.
    public let start: String
    /// Steps in document order.
    public let steps: [StepDefinition]
    private let stepsByID: [String: StepDefinition]
    /// Whether the journey runs on a phone: it has a step only a phone can answer (keys, biometrics, an
    /// enrollment code, the web code typed on the phone). Native clients start these, web clients the others.
    public let runsOnPhone: Bool
    /// Whether a step reads what the push carried (`@policy.getMobileApproveParameters()`): such a journey
    /// is a mobile approve journey, which only a push starts, whether or not a loaded journey pushes it.
    public let readsMobileApproveParameters: Bool
    /// The file it was loaded from, by its path under the journeys directory, and that file's text.
    public internal(set) var source: (file: String, text: String)?

    init(id: String, name: String, developmentOnly: Bool = false, start: String, steps: [StepDefinition]) {
        self.id = id
        self.name = name
        self.developmentOnly = developmentOnly
        self.start = start
        self.steps = steps
        self.stepsByID = Dictionary(steps.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        runsOnPhone = steps.contains { $0.type.behavior.isPhoneOnly }
        readsMobileApproveParameters = steps.contains { step in
            ((try? ConfigValue.expressions(in: .object(step.config))) ?? []).contains { $0.source == .mobileApproveParameters }
        }
    }

    /// The step with `id`.
    public func step(_ id: String) -> StepDefinition? {
        stepsByID[id]
    }

    /// The mobile journeys its web-to-mobile steps push to the phone, by step id.
    public var mobileJourneys: [(stepID: String, journeyID: String)] {
        steps.compactMap { step in
            guard step.type == .webToMobileAuthentication, let target = step.config[WebToMobileAuthenticationStep.mobileJourney.name]?.stringValue else { return nil }
            return (step.id, target)
        }
    }
}

/// One step of a journey as written in its YAML document.
public struct StepDefinition: Sendable {
    public let id: String
    public let type: StepType
    /// The step's configuration; string values starting with `@` are expressions.
    public let config: [String: JSONValue]
    /// Where to go when the step succeeds.
    public let next: String?
    /// Where to go when the step fails; without one a failure rejects the journey.
    public let failure: String?
    /// Where to go when the client cancels; without one a cancel rejects the journey.
    public let cancel: String?
    /// Custom branches the client may choose, by option id.
    public let branches: [String: BranchDefinition]

    /// Every step this one can lead to.
    var targets: [String] {
        [next, failure, cancel].compactMap { $0 } + branches.values.map(\.target).sorted()
    }

    /// The steps this one can lead to as it is entered, before the client sees it: `create_user` never
    /// waits for the client, and a step that finds what it needs missing (a user, a device, a web code, or
    /// for `complete` a user the run proved) fails at once. A ring of such ways would keep a run going round
    /// without end.
    var targetsOnEntry: [String] {
        switch type {
        case .createUser: continuationsOnEntry + [failure].compactMap { $0 }
        case .mobileBiometricsRegistration, .deviceRegistration, .issueEnrollmentCode, .mobileBiometricsTransactionSigning,
            .webToMobileAuthentication, .otpValidation, .complete:
            [failure].compactMap { $0 }
        case .loginForm, .collectInformation, .mobileBiometricsAuthentication, .enrollmentCode, .reject: []
        }
    }

    /// The steps a run goes on to from this one in the same pass, as it is entered: `create_user`'s `next`
    /// and `user_exists` (its failure, as every step's, starts a pass of its own). A pass goes through at
    /// most `JourneyRunner.maximumAutomaticSteps`.
    var continuationsOnEntry: [String] {
        type == .createUser ? [next, branches[CreateUserStep.userExistsBranch]?.target].compactMap { $0 } : []
    }

    /// Variable names the step writes besides its id: `output_variable`, `error_output_variable` and
    /// `branch_output_variable`.
    var declaredVariables: [String] {
        CommonStepConfig.variables.compactMap { self[$0] }
    }

    /// The value of one of its config keys as written (before any expression in it is resolved).
    subscript<Value>(key: ConfigKey<Value>) -> Value {
        key.read(from: config)
    }
}

/// A custom option the client may choose at a step, and what it must send with it.
public struct BranchDefinition: Sendable, Equatable {
    /// The step the branch leads to.
    public let target: String
    /// The form schema the client's data must satisfy; without one any data is accepted.
    public let schema: JSONValue?
    /// The option's label for the client.
    public let displayName: String?
}
