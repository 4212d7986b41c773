import CountersignCore

/// One key a step type reads from its `config`, declared once beside the step: what the loader accepts
/// there (values may still be expressions then), and the typed value the step reads once they are
/// resolved. A step reads `environment[Self.otpLength]`, never a string key.
struct ConfigKey<Value: Sendable>: Sendable {
    let rule: ConfigRule
    private let decode: @Sendable (JSONValue?) -> Value

    var name: String { rule.name }

    /// The value in `config` (absent, null or of the wrong kind reads as the key's default).
    func read(from config: [String: JSONValue]) -> Value {
        decode(config[name])
    }

    private init(_ name: String, _ kind: ConfigRule.Kind, required: Bool = false, decode: @escaping @Sendable (JSONValue?) -> Value) {
        rule = ConfigRule(name: name, kind: kind, required: required)
        self.decode = decode
    }

    /// Any value, as it is (an object of approval data, a form's schema).
    static func value(_ name: String, required: Bool = false) -> Self where Value == JSONValue? {
        Self(name, .any, required: required) { $0 == .null ? nil : $0 }
    }

    /// A string; nil when absent or not a string.
    static func text(_ name: String, required: Bool = false) -> Self where Value == String? {
        Self(name, .any, required: required) { $0?.stringValue }
    }

    /// A user identifier in its canonical form; nil when absent, or when it cannot name a user
    /// (`ExternalUserID.isAcceptable`: a control character in it would go into logs and security events).
    static func userIdentifier(_ name: String, required: Bool = false) -> Self where Value == String? {
        Self(name, .any, required: required) { value in
            value?.stringValue.map(ExternalUserID.canonical).flatMap { ExternalUserID.isAcceptable($0) ? $0 : nil }
        }
    }

    /// A journey's id, written as it is (no expression). Required: the loader has made sure it is there.
    static func journey(_ name: String) -> Self where Value == String {
        Self(name, .journeyName, required: true) { $0?.stringValue ?? "" }
    }

    /// A whole number clamped to `range`, its fraction dropped; `fallback` when absent.
    static func number(_ name: String, default fallback: Int, in range: ClosedRange<Int>) -> Self where Value == Int {
        Self(name, .number) { $0?.wholeNumber(clampedTo: range) ?? fallback }
    }

    /// A protection switched on or off: `true` or `false` (or an expression), never a string such as
    /// `"true"` that would read as off.
    static func `switch`(_ name: String, default fallback: Bool) -> Self where Value == Bool {
        Self(name, .switch) { value in
            if case .bool(let on)? = value { return on }
            return fallback
        }
    }

    /// One of a few words, the cases of `Value`.
    static func choice(_ name: String, default fallback: Value) -> Self where Value: RawRepresentable<String> & CaseIterable {
        Self(name, .choice(Value.allCases.map(\.rawValue))) { $0?.stringValue.flatMap(Value.init(rawValue:)) ?? fallback }
    }
}

/// What the loader accepts under a config key, before expressions are resolved.
struct ConfigRule: Sendable {
    enum Kind: Sendable {
        case any
        /// A number, or an expression giving one.
        case number
        /// `true`, `false`, or an expression.
        case `switch`
        /// One of these words.
        case choice([String])
        /// A journey's id.
        case journeyName
    }

    let name: String
    let kind: Kind
    /// Whether the step cannot run without it.
    let required: Bool

    /// Why the loader refuses `value` under this key, or nil.
    func problem(with value: JSONValue?) -> String? {
        guard let value else { return required ? "missing required config '\(name)'" : nil }
        if value == .null {
            // Left empty, a switch would read as off, silently.
            if case .switch = kind { return "config '\(name)' must be true, false or an expression" }
            return required ? "missing required config '\(name)'" : nil
        }
        // An expression is checked once it is resolved, by the value the step reads.
        let isExpression = value.stringValue != nil && (try? ConfigValue.expressions(in: value))?.isEmpty == false
        switch kind {
        case .any:
            return nil
        case .number:
            if case .number = value { return nil }
            return isExpression ? nil : "config '\(name)' must be a number or an expression"
        case .switch:
            // Holding a list or mapping, a switch would read as off, silently.
            if case .bool = value { return nil }
            return isExpression ? nil : "config '\(name)' must be true, false or an expression"
        case .choice(let words):
            return words.contains(value.stringValue ?? "") ? nil : "config '\(name)' must be one of: \(words.joined(separator: ", "))"
        case .journeyName:
            return value.stringValue == nil ? "config '\(name)' must name a journey" : nil
        }
    }
}

/// What a step type takes in its `config`: its keys, checked when a journey loads. A key no step reads,
/// a switch that is not a boolean or a word outside its choices is refused there, so that a typo cannot
/// quietly leave a protection at its default.
struct StepConfiguration: Sendable {
    /// Every key the step reads besides `common`; any other is refused.
    let keys: [ConfigRule]
    /// Groups of keys of which at least one must be present.
    var oneOf: [[String]] = []
    /// A check of the configuration beyond its keys (a form's schema): the problem, or nil.
    var check: (@Sendable ([String: JSONValue]) -> String?)?

    init(keys: [ConfigRule] = [], oneOf: [[String]] = [], check: (@Sendable ([String: JSONValue]) -> String?)? = nil) {
        self.keys = keys
        self.oneOf = oneOf
        self.check = check
    }
}

/// Keys any step may take: its tries, its output variables, its failure and cancel behaviour. They are
/// read as written (no expression).
enum CommonStepConfig {
    static let maxAttempts = ConfigKey.number(
        "max_attempts", default: JourneyRunner.defaultMaxAttempts, in: 1...JourneyRunner.mostMaxAttempts)
    static let outputVariable = ConfigKey.text("output_variable")
    static let errorOutputVariable = ConfigKey.text("error_output_variable")
    static let branchOutputVariable = ConfigKey.text("branch_output_variable")
    /// `failure_branch` or `abort`, agreeing with the step's `failure` (the loader checks).
    static let failureBehavior = ConfigKey.text("failure_behavior")
    /// `cancel_branch` or `abort`, agreeing with the step's `cancel`.
    static let cancelBehavior = ConfigKey.text("cancel_behavior")

    /// The variables a step writes besides its id.
    static let variables = [outputVariable, errorOutputVariable, branchOutputVariable]
    static let rules = [maxAttempts.rule, failureBehavior.rule, cancelBehavior.rule] + variables.map(\.rule)
}
