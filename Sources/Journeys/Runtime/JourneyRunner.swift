import CountersignCore
import Foundation

/// Runs a journey one client call at a time over an `InteractionState`.
///
/// The runner changes only the state it is given and acts on the world only through `effects`, so the
/// caller decides whether the call's changes are kept (the server drops them when a call is refused).
public struct JourneyRunner: Sendable {
    /// Wrong credentials a step accepts before it fails, unless its config sets `max_attempts`.
    public static let defaultMaxAttempts = 3
    /// The most tries `max_attempts` may allow.
    static let mostMaxAttempts = 100
    /// Steps that may run one after another without the client in one pass. The loader refuses a ring of
    /// them (`StepDefinition.targetsOnEntry`) and a longer chain (`continuationsOnEntry`), so a loaded
    /// journey never reaches this.
    static let maximumAutomaticSteps = 64

    let journey: JourneyDefinition
    let effects: any JourneyEffects
    let now: Date

    public init(journey: JourneyDefinition, effects: any JourneyEffects, now: Date) {
        self.journey = journey
        self.effects = effects
        self.now = now
    }

    /// Runs from the journey's first step to the first step that needs the client.
    public func start(_ state: inout InteractionState) async throws -> StepPresentation {
        Self.showingRequestContext(try await advance(to: journey.start, &state), state)
    }

    /// Answers the current step with `response`.
    ///
    /// Throws `ClientResponseNotValid` for a malformed answer or an option the step does not offer.
    public func submit(_ response: ClientResponse, to state: inout InteractionState) async throws -> StepPresentation {
        Self.showingRequestContext(try await answer(response, &state), state)
    }

    /// In a mobile approve journey every client step carries where the web request came from
    /// (`data.request_context`: application, client IP, browser, OS, time), so that the person can tell
    /// their own request from someone else's.
    private static func showingRequestContext(_ presentation: StepPresentation, _ state: InteractionState) -> StepPresentation {
        guard !state.isFinished, let context = state.mobileApproveParameters["request_context"], context != .null else { return presentation }
        var shown = presentation
        var data = presentation.data?.objectValue ?? [:]
        data["request_context"] = context
        shown.data = .object(data)
        return shown
    }

    private func answer(_ response: ClientResponse, _ state: inout InteractionState) async throws -> StepPresentation {
        guard let current = state.current, let step = journey.step(current.stepID) else {
            throw ClientResponseNotValid("the journey has ended")
        }
        let environment = environment(for: step, state: state, secrets: current.secrets)
        let outcome: StepOutcome
        switch response.option {
        case ClientResponseOptionType.clientInput.rawValue:
            outcome = try await step.type.behavior.receive(response.data, &state, environment)
        case ClientResponseOptionType.cancel.rawValue:
            try await step.type.behavior.cancel(&state, environment)
            if state.approvalID != nil, response.data?["reason"]?.stringValue == DenialReason.notMine {
                state.reportedNotMine = true
            }
            let cancelled = WireError(code: ErrorCode.cancelled, message: "The journey was cancelled.")
            record(cancelled, of: step, &state)
            if let target = step.cancel { return try await advance(to: target, &state) }
            return try await finish(.rejection(cancelled), &state)
        case ClientResponseOptionType.resend.rawValue
        where step.type.behavior.extraOptions(secrets: current.secrets).contains { $0.type == .resend }:
            outcome = try await step.type.behavior.resend(&state, environment)
        case ClientResponseOptionType.failure.rawValue:
            // Leaving the step any way but by its own outcome ends what it started, as a cancel does (a
            // waiting approval is cancelled on the phone).
            try await step.type.behavior.cancel(&state, environment)
            let message = response.data?["message"]?.stringValue ?? "The client reported a failure."
            outcome = .failure(WireError(code: ErrorCode.clientFailure, message: message))
        case let option where step.branches[option] != nil:
            let branch = step.branches[option]!
            try await step.type.behavior.cancel(&state, environment)
            return try await take(branch, option: option, data: response.data, from: step, &state)
        default:
            throw ClientResponseNotValid("option '\(response.option)' is not offered by this step")
        }
        return try await follow(outcome, from: step, &state)
    }

    /// Follows a custom branch. Data the branch's schema refuses leaves the run unchanged; accepted data
    /// is readable as `@<step>.data` and under `branch_output_variable`.
    private func take(
        _ branch: BranchDefinition, option: String, data: JSONValue?, from step: StepDefinition, _ state: inout InteractionState
    ) async throws -> StepPresentation {
        var accepted = data
        if let schema = branch.schema {
            switch FormSchema.validate(data ?? .object([:]), against: schema) {
            case .success(let fields): accepted = .object(fields)
            case .failure(let error): throw ClientResponseNotValid("branch '\(option)': \(error.message)")
            }
        }
        if let accepted {
            state.variables[step.id] = ["branch": .string(option), "data": accepted]
            if let name = step[CommonStepConfig.branchOutputVariable] { state.variables[name] = accepted }
        }
        return try await advance(to: branch.target, &state)
    }

    private func follow(_ outcome: StepOutcome, from step: StepDefinition, _ state: inout InteractionState) async throws -> StepPresentation {
        switch outcome {
        case .next(let output):
            store(output, of: step, &state)
            guard let next = step.next else { throw JourneyRuntimeError.missingNext(step.id) }
            return try await advance(to: next, &state)
        case .branch(let target, let output):
            store(output, of: step, &state)
            return try await advance(to: target, &state)
        case .failure(let error):
            record(error, of: step, &state)
            if let target = step.failure { return try await advance(to: target, &state) }
            return try await finish(.rejection(error), &state)
        case .retry(let error):
            guard state.countFailedAttempt(at: step.id) < Self.maxAttempts(of: step) else {
                return try await follow(.failure(error), from: step, &state)
            }
            var presentation = try await enter(step, &state)
            presentation.error = error
            return presentation
        case .stay(let data, let secrets, let error), .stillWaiting(let data, let secrets, let error):
            var presentation = try stay(at: step, data: data, secrets: secrets, &state)
            presentation.error = error
            if case .stillWaiting = outcome { presentation.keepsToken = true }
            return presentation
        case .finish(let presentation):
            return try await finish(presentation, &state)
        }
    }

    private func advance(to stepID: String, _ state: inout InteractionState) async throws -> StepPresentation {
        var target = stepID
        for _ in 0..<Self.maximumAutomaticSteps {
            guard let step = journey.step(target) else { throw JourneyRuntimeError.unknownStep(target) }
            guard state.failedAttempts(at: step.id) < Self.maxAttempts(of: step) else {
                // Back at a step whose tries are used up: entering it again would give them all again.
                return try await finish(.rejection(.invalidCredentials("No tries are left at step '\(step.id)'.")), &state)
            }
            let environment = environment(for: step, state: state, secrets: [:])
            switch try await step.type.behavior.enter(&state, environment) {
            case .present(let journeyStepID, let data, let secrets):
                return wait(at: step, journeyStepID: journeyStepID, data: data, secrets: secrets, &state)
            case .outcome(.next(let output)):
                store(output, of: step, &state)
                guard let next = step.next else { throw JourneyRuntimeError.missingNext(step.id) }
                target = next
            case .outcome(.branch(let next, let output)):
                store(output, of: step, &state)
                target = next
            case .outcome(let other):
                return try await follow(other, from: step, &state)
            }
        }
        throw JourneyRuntimeError.tooManyAutomaticSteps(journey.id)
    }

    /// The wrong credentials `step` accepts in a run before it fails.
    private static func maxAttempts(of step: StepDefinition) -> Int {
        step[CommonStepConfig.maxAttempts]
    }

    /// Enters `step` again (fresh secrets), for a repeat after a wrong credential.
    private func enter(_ step: StepDefinition, _ state: inout InteractionState) async throws -> StepPresentation {
        let environment = environment(for: step, state: state, secrets: [:])
        guard case .present(let journeyStepID, let data, let secrets) = try await step.type.behavior.enter(&state, environment) else {
            throw JourneyRuntimeError.cannotRepeat(step.id)
        }
        return wait(at: step, journeyStepID: journeyStepID, data: data, secrets: secrets, &state)
    }

    /// Shows the current step again with `data` and `secrets`.
    private func stay(
        at step: StepDefinition, data: JSONValue?, secrets: [String: String], _ state: inout InteractionState
    ) throws -> StepPresentation {
        guard var current = state.current else { throw JourneyRuntimeError.cannotRepeat(step.id) }
        current.data = data
        current.secrets = secrets
        state.current = current
        return presentation(of: step, journeyStepID: current.journeyStepID, data: data, secrets: secrets)
    }

    /// Makes `step` the one the run waits on, showing `data`; returns what the client is shown.
    private func wait(
        at step: StepDefinition, journeyStepID: String, data: JSONValue?, secrets: [String: String], _ state: inout InteractionState
    ) -> StepPresentation {
        state.current = CurrentStep(
            stepID: step.id, journeyStepID: journeyStepID, data: data, secrets: secrets, failedAttempts: state.failedAttempts(at: step.id))
        return presentation(of: step, journeyStepID: journeyStepID, data: data, secrets: secrets)
    }

    /// Ends the run. A mobile approve journey also settles its approval: approved only when the
    /// journey authenticated the person, denied when it was rejected. One that reached its end without
    /// authenticating the person approves nothing, and the phone is told so rather than handed a token.
    private func finish(_ presentation: StepPresentation, _ state: inout InteractionState) async throws -> StepPresentation {
        state.current = nil
        guard let approvalID = state.approvalID else { return presentation }
        if presentation.journeyStepID == JourneyStepID.rejection {
            try await effects.settleApproval(approvalID: approvalID, outcome: state.reportedNotMine == true ? .deniedNotMine : .denied)
            return presentation
        }
        guard state.amr.contains(where: ApprovalOutcome.authenticationMethods.contains) else {
            try await effects.settleApproval(approvalID: approvalID, outcome: .failed(code: ErrorCode.mobileNotAuthenticated))
            return .rejection(WireError(code: ErrorCode.mobileNotAuthenticated, message: "The journey authenticated nobody, so it approved nothing."))
        }
        try await effects.settleApproval(
            approvalID: approvalID,
            outcome: .approved(
                amr: state.amr, authTime: state.authTime ?? now, signedApprovalData: state.signedApprovalData,
                signedAuthorizationRequest: state.signedAuthorizationRequest))
        return presentation
    }

    private func presentation(of step: StepDefinition, journeyStepID: String, data: JSONValue?, secrets: [String: String]) -> StepPresentation {
        var options: [String: ClientResponseOption] = [
            "client_input": .clientInput, "cancel": .cancel, "failure": .failure,
        ]
        for option in step.type.behavior.extraOptions(secrets: secrets) {
            options[option.id] = option
        }
        for (id, branch) in step.branches {
            options[id] = ClientResponseOption(type: .custom, id: id, label: branch.displayName ?? id)
        }
        return StepPresentation(journeyStepID: journeyStepID, data: data, options: options, token: nil, error: nil, isFinal: false)
    }

    /// Keeps why a step failed or was cancelled under `<step>_error` and its `error_output_variable`.
    private func record(_ error: WireError, of step: StepDefinition, _ state: inout InteractionState) {
        let recorded: JSONValue = ["code": .string(error.code), "message": .string(error.message)]
        state.variables[step.id + "_error"] = recorded
        if let name = step[CommonStepConfig.errorOutputVariable] { state.variables[name] = recorded }
    }

    /// Keeps a finished step's output under its id and its `output_variable`.
    private func store(_ output: JSONValue?, of step: StepDefinition, _ state: inout InteractionState) {
        guard let output else { return }
        state.variables[step.id] = output
        if let name = step[CommonStepConfig.outputVariable] { state.variables[name] = output }
    }

    private func environment(for step: StepDefinition, state: InteractionState, secrets: [String: String]) -> StepEnvironment {
        let context = state.expressionContext
        let config = step.config.mapValues { ConfigValue.resolve($0, in: context) }
        return StepEnvironment(
            step: step, journeyIsDevelopmentOnly: journey.developmentOnly, config: config, effects: effects, now: now, secrets: secrets)
    }
}

/// A journey that passed validation but cannot go on; a server bug or a changed document.
enum JourneyRuntimeError: Error, CustomStringConvertible {
    case unknownStep(String)
    case missingNext(String)
    case cannotRepeat(String)
    case tooManyAutomaticSteps(String)

    var description: String {
        switch self {
        case .unknownStep(let id): "no step '\(id)'"
        case .missingNext(let id): "step '\(id)' has no next step"
        case .cannotRepeat(let id): "step '\(id)' cannot be shown again"
        case .tooManyAutomaticSteps(let id): "journey '\(id)' ran too many steps without the client"
        }
    }
}
