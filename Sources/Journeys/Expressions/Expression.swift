import CountersignCore

/// A value computed when a step runs, written in configuration as a string starting with `@`:
///
/// ```yaml
/// external_user_id: "@policy.request().params.email"   # a start parameter
/// user: "@policy.userContext().external_user_id"       # the user the journey knows so far
/// data: "@policy.getMobileApproveParameters().approval_data"
/// email: "@login.email"                                # a field of step `login`'s output
/// ```
///
/// A literal string that must start with `@` is written with `@@`.
public struct Expression: Sendable, Equatable {
    /// What the expression reads from.
    public enum Source: Sendable, Equatable {
        case requestParams
        case userContext
        case mobileApproveParameters
        case variable(String)
    }

    public let source: Source
    /// Member names to follow inside the source.
    public let path: [String]

    /// Why an expression could not be parsed.
    public struct SyntaxError: Error, Equatable, CustomStringConvertible {
        public let expression: String
        public let reason: String
        public var description: String { "bad expression '\(expression)': \(reason)" }
    }

    /// Parses `text`, which starts with a single `@`.
    public init(parsing text: String) throws(SyntaxError) {
        func fail(_ reason: String) -> SyntaxError { SyntaxError(expression: text, reason: reason) }
        guard text.hasPrefix("@"), !text.hasPrefix("@@") else { throw fail("an expression starts with a single @") }
        let segments = text.dropFirst().split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let head = segments.first else { throw fail("empty expression") }
        if head == "policy" {
            guard segments.count >= 2 else { throw fail("@policy needs a function, e.g. @policy.userContext()") }
            var rest = Array(segments.dropFirst(2))
            switch segments[1] {
            case "request()":
                guard rest.first == "params" else { throw fail("@policy.request() offers only .params") }
                rest.removeFirst()
                source = .requestParams
            case "userContext()":
                source = .userContext
            case "getMobileApproveParameters()":
                source = .mobileApproveParameters
            default:
                throw fail("unknown function '\(segments[1])'; use request(), userContext() or getMobileApproveParameters()")
            }
            path = rest
        } else {
            source = .variable(head)
            path = Array(segments.dropFirst())
        }
        if case .variable(let name) = source, !Self.isIdentifier(name) {
            throw fail("'\(name)' is not a valid variable name")
        }
        for name in path where !Self.isIdentifier(name) {
            throw fail("'\(name)' is not a valid member name")
        }
    }

    /// The value in `context`, or null when any member along the path is missing.
    public func evaluate(in context: ExpressionContext) -> JSONValue {
        var value: JSONValue
        switch source {
        case .requestParams: value = .object(context.requestParams)
        case .userContext: value = .object(context.userContext)
        case .mobileApproveParameters: value = .object(context.mobileApproveParameters)
        case .variable(let name): value = context.variables[name] ?? .null
        }
        for member in path {
            value = value[member] ?? .null
        }
        return value
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || first.properties.isAlphabetic else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
    }
}

/// What expressions can read while a journey runs.
public struct ExpressionContext: Sendable {
    public var requestParams: [String: JSONValue]
    public var userContext: [String: JSONValue]
    public var mobileApproveParameters: [String: JSONValue]
    public var variables: [String: JSONValue]

    public init(
        requestParams: [String: JSONValue], userContext: [String: JSONValue],
        mobileApproveParameters: [String: JSONValue], variables: [String: JSONValue]
    ) {
        self.requestParams = requestParams
        self.userContext = userContext
        self.mobileApproveParameters = mobileApproveParameters
        self.variables = variables
    }
}

/// Resolving expressions inside configuration values.
enum ConfigValue {
    /// Every expression in `value`, however deeply nested.
    static func expressions(in value: JSONValue) throws(Expression.SyntaxError) -> [Expression] {
        switch value {
        case .string(let text) where text.hasPrefix("@") && !text.hasPrefix("@@"):
            return [try Expression(parsing: text)]
        case .array(let elements):
            var found: [Expression] = []
            for element in elements { found += try expressions(in: element) }
            return found
        case .object(let members):
            var found: [Expression] = []
            for key in members.keys.sorted() { found += try expressions(in: members[key]!) }
            return found
        default:
            return []
        }
    }

    /// `value` with every expression replaced by its value (expressions were checked at load time).
    static func resolve(_ value: JSONValue, in context: ExpressionContext) -> JSONValue {
        switch value {
        case .string(let text) where text.hasPrefix("@@"):
            return .string(String(text.dropFirst()))
        case .string(let text) where text.hasPrefix("@"):
            return (try? Expression(parsing: text))?.evaluate(in: context) ?? .null
        case .array(let elements):
            return .array(elements.map { resolve($0, in: context) })
        case .object(let members):
            return .object(members.mapValues { resolve($0, in: context) })
        default:
            return value
        }
    }
}
