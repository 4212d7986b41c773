import CountersignCore
import Foundation

/// RFC 9396 `authorization_details` as a backend client sends them (DESIGN.md §7): at most 5 objects, 4 KiB
/// in all, each of a type its registration allows, each checked strictly against its type's schema
/// (`AuthorizationDetailTypes`).
/// Strings must be printable text without control, bidirectional or zero-width characters, so that what
/// the phone shows is what is signed; numbers are integers (amounts travel as strings).
enum AuthorizationDetails {
    static let mostObjects = 5
    static let mostBytes = 4096

    /// The details in `text` (a JSON array, as a form sends them) when every rule holds; otherwise why
    /// not, for `invalid_authorization_details`.
    static func parse(_ text: String, allowedTypes: Set<String>, types: AuthorizationDetailTypes) throws(OAuthError) -> [JSONValue] {
        guard text.utf8.count <= mostBytes else { throw refusal("is over \(mostBytes) bytes") }
        guard let value = try? StrictJSON.parse(text.utf8) else { throw refusal("must be a JSON array") }
        return try check(value, allowedTypes: allowedTypes, types: types)
    }

    /// `value` (already parsed: a form's text, or a request object's claim) when every rule holds.
    static func check(_ value: JSONValue, allowedTypes: Set<String>, types: AuthorizationDetailTypes) throws(OAuthError) -> [JSONValue] {
        guard let objects = value.arrayValue else { throw refusal("must be a JSON array") }
        guard CanonicalJSON.text(value).utf8.count <= mostBytes else { throw refusal("is over \(mostBytes) bytes") }
        guard objects.count <= mostObjects else { throw refusal("holds more than \(mostObjects) objects") }
        for (index, object) in objects.enumerated() {
            guard let type = object["type"]?.stringValue else { throw refusal("[\(index)] needs a 'type'") }
            guard allowedTypes.contains(type) else { throw refusal("[\(index)]: the client may not send the type '\(type.prefix(64))'") }
            if let problem = problemOfValues(in: object, at: "[\(index)]") { throw refusal(problem) }
            // A type the client was allowed but this server no longer declares is held to nothing: refused.
            guard let rule = types.rules[type] else { throw refusal("[\(index)]: the type '\(type.prefix(64))' is not declared on this server") }
            if let problem = rule.problem(with: object, at: "[\(index)]") { throw refusal(problem) }
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
            // Below 10^15, where every JSON writer involved still writes the integer's digits.
            return number.rounded() == number && abs(number) < 1e15 ? nil : "\(path) must be an integer below 10^15 (amounts are strings)"
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
}

/// Text a person reads on their phone before they sign it: nothing that is not drawn as itself, nothing
/// drawn over its neighbours.
enum PrintableText {
    /// The most combining marks one character may carry: more are drawn over the text around it.
    static let mostMarks = 2

    /// Why `text` is not printable, or nil.
    static func problem(in text: String) -> String? {
        if let first = text.unicodeScalars.first, isMark(first) { return "starts with a combining mark (U+\(hex(first)))" }
        for character in text where character.unicodeScalars.count(where: isMark) > mostMarks {
            return "holds a character with more than \(mostMarks) combining marks"
        }
        for scalar in text.unicodeScalars {
            if scalar.properties.isDefaultIgnorableCodePoint {
                return "holds an invisible character such as a direction override, a zero-width one or a filler (U+\(hex(scalar)))"
            }
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

    private static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }

    private static func hex(_ scalar: Unicode.Scalar) -> String {
        String(format: "%04X", scalar.value)
    }
}
