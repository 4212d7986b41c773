import CountersignCore
import Foundation

/// How one step type behaves. Steps that wait for the client return `.present` from `enter` and are
/// answered through `receive`; automatic steps return their outcome from `enter` directly.
protocol StepBehavior: Sendable {
    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry
    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome
}

extension StepBehavior {
    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        throw ClientResponseNotValid("this step takes no input")
    }
}

/// What a step works with: its definition, its configuration with expressions resolved, the
/// outside world, and the time.
struct StepEnvironment: Sendable {
    let step: StepDefinition
    let config: [String: JSONValue]
    let effects: any JourneyEffects
    let now: Date
    /// The secrets presented with the current step, e.g. its challenge.
    let secrets: [String: String]

    /// A configured string, or nil when absent or not a string.
    func string(_ key: String) -> String? {
        config[key]?.stringValue
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
    /// Continue on the named step.
    case branch(to: String)
    /// Take the failure branch, or reject the journey when there is none.
    case failure(WireError)
    /// A wrong credential: show the step again with fresh secrets, until the attempts run out.
    case retry(WireError)
    /// The journey ends here.
    case finish(StepPresentation)
}
