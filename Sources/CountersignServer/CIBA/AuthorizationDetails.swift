import CountersignCore
import Foundation

/// RFC 9396 `authorization_details` as a backend client sends them (DESIGN.md §7): at most 5 objects, 4 KiB
/// in all, each of a type its registration allows, each checked strictly against its type's rules.
/// Strings must be printable text without control, bidirectional or zero-width characters, so that what
/// the phone shows is what is signed; numbers are integers (amounts travel as strings).
enum AuthorizationDetails {
    static let mostObjects = 5
    static let mostBytes = 4096

    /// The details in `text` (a JSON array) when every rule holds; otherwise why not, for
    /// `invalid_authorization_details`.
    static func parse(_ text: String, allowedTypes: Set<String>) throws(OAuthError) -> [JSONValue] {
        guard text.utf8.count <= mostBytes else { throw refusal("is over \(mostBytes) bytes") }
        guard let value = try? StrictJSON.parse(text.utf8), let objects = value.arrayValue else { throw refusal("must be a JSON array") }
        guard objects.count <= mostObjects else { throw refusal("holds more than \(mostObjects) objects") }
        for (index, object) in objects.enumerated() {
            guard let type = object["type"]?.stringValue else { throw refusal("[\(index)] needs a 'type'") }
            guard allowedTypes.contains(type) else { throw refusal("[\(index)]: the client may not send the type '\(type.prefix(64))'") }
            if let problem = problemOfValues(in: object, at: "[\(index)]") { throw refusal(problem) }
            if let rules = builtInRules[type], let problem = rules.problem(with: object, at: "[\(index)]") { throw refusal(problem) }
        }
        return objects
    }

    static func refusal(_ problem: String) -> OAuthError {
        OAuthError(status: .badRequest, code: "invalid_authorization_details", description: "authorization_details \(problem).")
    }

    /// Where a string or number anywhere in `value` breaks the rules of every type.
    private static func problemOfValues(in value: JSONValue, at path: String) -> String? {
        switch value {
        case .string(let text):
            return PrintableText.problem(in: text).map { "\(path) \($0)" }
        case .number(let number):
            return number.rounded() == number && abs(number) < 9_007_199_254_740_992 ? nil : "\(path) must be an integer (amounts are strings)"
        case .object(let members):
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                if let problem = PrintableText.problem(in: key) { return "\(path) has a key that \(problem)" }
                if let problem = problemOfValues(in: member, at: "\(path).\(key.prefix(64))") { return problem }
            }
            return nil
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let problem = problemOfValues(in: element, at: "\(path)[\(index)]") { return problem }
            }
            return nil
        case .bool, .null:
            return nil
        }
    }

    /// The types the server knows without an operator's schema.
    static let builtInRules: [String: ObjectRule] = [
        "payment_initiation": ObjectRule(
            required: ["type", "instructedAmount", "creditorName", "creditorAccount"],
            fields: [
                "type": .text(pattern: nil, longest: 64),
                "actions": .list(.text(pattern: nil, longest: 64)),
                "locations": .list(.text(pattern: nil, longest: 256)),
                "instructedAmount": .object(ObjectRule(
                    required: ["currency", "amount"],
                    fields: [
                        "currency": .text(pattern: "^[A-Z]{3}$", longest: 3),
                        "amount": .text(pattern: "^(0|[1-9][0-9]{0,14})(\\.[0-9]{1,6})?$", longest: 22),
                    ])),
                "creditorName": .text(pattern: nil, longest: 140),
                "creditorAccount": .object(ObjectRule(
                    required: ["iban"], fields: ["iban": .text(pattern: "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$", longest: 34)])),
                "remittanceInformationUnstructured": .text(pattern: nil, longest: 140),
            ]),
    ]

    /// The members an object of a built-in type has: the ones it needs, and each one's rule. Any other is refused.
    struct ObjectRule: Sendable {
        let required: [String]
        let fields: [String: FieldRule]

        func problem(with value: JSONValue, at path: String) -> String? {
            guard let members = value.objectValue else { return "\(path) must be an object" }
            if let missing = required.first(where: { members[$0] == nil }) { return "\(path) needs '\(missing)'" }
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                guard let rule = fields[key] else { return "\(path) has the unknown member '\(key.prefix(64))'" }
                if let problem = rule.problem(with: member, at: "\(path).\(key)") { return problem }
            }
            return nil
        }
    }

    indirect enum FieldRule: Sendable {
        case text(pattern: String?, longest: Int)
        case list(FieldRule)
        case object(ObjectRule)

        func problem(with value: JSONValue, at path: String) -> String? {
            switch self {
            case .text(let pattern, let longest):
                guard let text = value.stringValue, !text.isEmpty, text.count <= longest else {
                    return "\(path) must be a string of 1 to \(longest) characters"
                }
                if let pattern, text.range(of: pattern, options: .regularExpression) == nil { return "\(path) is not well formed" }
                return nil
            case .list(let element):
                guard let elements = value.arrayValue, elements.count <= 10 else { return "\(path) must be a list of at most 10" }
                for (index, item) in elements.enumerated() {
                    if let problem = element.problem(with: item, at: "\(path)[\(index)]") { return problem }
                }
                return nil
            case .object(let rule):
                return rule.problem(with: value, at: path)
            }
        }
    }
}

/// Text a person reads on their phone before they sign it: nothing that is not drawn as itself.
enum PrintableText {
    /// Why `text` is not printable, or nil.
    static func problem(in text: String) -> String? {
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control: return "holds a control character (U+\(hex(scalar)))"
            case .format: return "holds an invisible formatting character such as a direction override or a zero-width one (U+\(hex(scalar)))"
            case .lineSeparator, .paragraphSeparator: return "holds a line break (U+\(hex(scalar)))"
            case .surrogate, .privateUse, .unassigned: return "holds a character that is not text (U+\(hex(scalar)))"
            default: continue
            }
        }
        return nil
    }

    private static func hex(_ scalar: Unicode.Scalar) -> String {
        String(format: "%04X", scalar.value)
    }
}
