import CountersignCore
import Foundation

/// How one step type behaves. Steps that wait for the client return `.present` from `enter` and are
/// answered through `receive`; automatic steps return their outcome from `enter` directly.
protocol StepBehavior: Sendable {
    /// What the step takes in its `config`.
    var configuration: StepConfiguration { get }
    /// Whether only a phone can answer the step.
    var isPhoneOnly: Bool { get }
    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry
    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome
    /// Options the step offers besides client_input, cancel, failure and its custom branches.
    func extraOptions(secrets: [String: String]) -> [ClientResponseOption]
    /// Answers the `resend` option, when `extraOptions` offers it.
    func resend(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome
    /// Runs before a cancel leaves the step, to end whatever the step started.
    func cancel(_ state: inout InteractionState, _ environment: StepEnvironment) async throws
}

extension StepBehavior {
    var configuration: StepConfiguration { StepConfiguration() }

    var isPhoneOnly: Bool { false }

    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        throw ClientResponseNotValid("this step takes no input")
    }

    func extraOptions(secrets: [String: String]) -> [ClientResponseOption] { [] }

    func resend(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        throw ClientResponseNotValid("option 'resend' is not offered by this step")
    }

    func cancel(_ state: inout InteractionState, _ environment: StepEnvironment) async throws {}
}

/// What a step works with: its definition, its configuration with expressions resolved, the
/// outside world, and the time.
struct StepEnvironment: Sendable {
    let step: StepDefinition
    /// Whether the journey is a development-only demo (`development_only: true`).
    let journeyIsDevelopmentOnly: Bool
    let config: [String: JSONValue]
    let effects: any JourneyEffects
    let now: Date
    /// The secrets presented with the current step, e.g. its challenge.
    let secrets: [String: String]

    /// The value of one of the step's config keys.
    subscript<Value>(key: ConfigKey<Value>) -> Value {
        key.read(from: config)
    }
}

extension JSONValue {
    /// This number clamped to `range`, its fraction dropped; nil when it is not a number (or is NaN).
    /// Clamped before it becomes an `Int`, so a huge or infinite value (from YAML, or an expression
    /// reading a start's parameters) cannot trap the conversion.
    func wholeNumber(clampedTo range: ClosedRange<Int>) -> Int? {
        guard case .number(let value) = self, !value.isNaN else { return nil }
        return Int(min(max(value, Double(range.lowerBound)), Double(range.upperBound)))
    }
}

/// How entering a step turned out.
enum StepEntry {
    /// Wait for the client: what it sees, and what only the server keeps.
    case present(journeyStepID: String, data: JSONValue?, secrets: [String: String])
    /// The step finished without the client.
    case outcome(StepOutcome)
}

/// Where a step sends the journey.
enum StepOutcome {
    /// Continue on `next`, storing `output` under the step id.
    case next(output: JSONValue?)
    /// Continue on the named step, storing `output` (when given) as `next` does.
    case branch(to: String, output: JSONValue?)
    /// Take the failure branch, or reject the journey when there is none.
    case failure(WireError)
    /// A wrong credential: show the step again with fresh secrets, until the attempts run out.
    case retry(WireError)
    /// Stay on the step, showing it again with new data (a device chosen, a resend, a refusal).
    case stay(data: JSONValue?, secrets: [String: String], error: WireError?)
    /// Still waiting for something outside the client (the phone), which a poll only looks at: the step
    /// is shown again with `data` (and `error`, for an answer refused that changed nothing), and the
    /// client's interaction token stays valid (`StepPresentation.keepsToken`).
    case stillWaiting(data: JSONValue?, secrets: [String: String], error: WireError? = nil)
    /// The journey ends here.
    case finish(StepPresentation)
}

/// The client asked again sooner than the step allows: HTTP 429 `slow_down`, nothing changes.
public struct SlowDown: Error, Sendable {
    /// Seconds until the next call will be answered.
    public let retryAfter: Int
}
