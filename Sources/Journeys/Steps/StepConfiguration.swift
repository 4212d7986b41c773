import CountersignCore

/// What a step type takes in its `config`, declared beside its behaviour and checked when a journey
/// loads: a key no step reads, a switch that is not a boolean or a word outside its choices is refused
/// there, so that a typo cannot quietly leave a protection at its default.
struct StepConfiguration: Sendable {
    /// Keys the step cannot run without.
    var required: [String] = []
    /// Every key the step reads besides `common`; any other is refused.
    var known: Set<String> = []
    /// Keys that take one of a few words, with the words.
    var choices: [String: [String]] = [:]
    /// Keys that switch a protection on or off: they take `true` or `false` (or an expression), never a
    /// string such as `"true"` that would read as off.
    var switches: [String] = []
    /// Keys that name a journey, written as they are (no expression).
    var journeyNames: [String] = []
    /// Groups of keys of which at least one must be present.
    var oneOf: [[String]] = []
    /// A check of the configuration beyond its keys (a form's schema): the problem, or nil.
    var check: (@Sendable ([String: JSONValue]) -> String?)?

    /// Keys any step may take: its tries, its output variables, its failure and cancel behaviour.
    static let common: Set<String> = [
        "max_attempts", "output_variable", "error_output_variable", "branch_output_variable", "failure_behavior", "cancel_behavior",
    ]
}
