import CountersignCore
import Foundation

/// The `authorization_details` types (RFC 9396) this server knows: `payment_initiation`, built in, and any
/// an operator declares as a JSON Schema file beside the journeys (`authorization_details/<type>.json` in
/// the journeys directory), read and checked at start as the journeys are: a schema the checks cannot
/// hold to its word stops the start, naming the file and why.
struct AuthorizationDetailTypes: Sendable {
    /// Each type's rule, by type.
    let rules: [String: DetailRule.Object]

    var names: Set<String> { Set(rules.keys) }

    /// The folder of the journeys directory that holds operators' types.
    static let folder = "authorization_details"

    /// The built-in types, and those declared in `journeysDirectory`'s `authorization_details/`.
    static func load(journeysDirectory: String?) throws -> AuthorizationDetailTypes {
        var rules = ["payment_initiation": try DetailSchema.rule(of: Self.paymentInitiation, file: "payment_initiation (built in)")]
        guard let journeysDirectory else { return AuthorizationDetailTypes(rules: rules) }
        let folder = URL(fileURLWithPath: journeysDirectory).appendingPathComponent(Self.folder)
        guard let files = try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil) else {
            return AuthorizationDetailTypes(rules: rules)
        }
        for file in files.sorted(by: { $0.lastPathComponent < $1.lastPathComponent }) where file.pathExtension == "json" {
            let type = file.deletingPathExtension().lastPathComponent
            let name = "\(Self.folder)/\(file.lastPathComponent)"
            guard type.range(of: "^[a-z][a-z0-9_]{0,63}$", options: .regularExpression) != nil else {
                throw DetailSchema.Problem(file: name, reason: "a type is named by 1 to 64 lower-case letters, digits and underscores")
            }
            guard rules[type] == nil else { throw DetailSchema.Problem(file: name, reason: "'\(type)' is built in") }
            let schema: JSONValue
            do {
                schema = try StrictJSON.parse(try Data(contentsOf: file))
            } catch {
                throw DetailSchema.Problem(file: name, reason: "not strict JSON: \(error)")
            }
            rules[type] = try DetailSchema.rule(of: schema, file: name)
        }
        return AuthorizationDetailTypes(rules: rules)
    }

    /// `payment_initiation` as RFC 9396's example has it: an amount as a decimal string in a currency of
    /// three capital letters, the creditor's name and IBAN, and optionally the remittance text, actions
    /// and locations.
    static let paymentInitiation: JSONValue = [
        "type": "object",
        "required": ["type", "instructedAmount", "creditorName", "creditorAccount"],
        "properties": [
            "type": ["type": "string", "maxLength": 64],
            "actions": ["type": "array", "maxItems": 10, "items": ["type": "string", "maxLength": 64]],
            "locations": ["type": "array", "maxItems": 10, "items": ["type": "string", "maxLength": 256]],
            "instructedAmount": [
                "type": "object",
                "required": ["currency", "amount"],
                "properties": [
                    "currency": ["type": "string", "pattern": "^[A-Z]{3}$", "maxLength": 3],
                    "amount": ["type": "string", "pattern": "^(0|[1-9][0-9]{0,14})(\\.[0-9]{1,6})?$", "maxLength": 22],
                ],
            ],
            "creditorName": ["type": "string", "maxLength": 140],
            "creditorAccount": [
                "type": "object",
                "required": ["iban"],
                "properties": ["iban": ["type": "string", "pattern": "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$", "maxLength": 34]],
            ],
            "remittanceInformationUnstructured": ["type": "string", "maxLength": 140],
        ],
    ]
}

/// What a value of an authorization detail must be, read from a JSON Schema (`DetailSchema`).
enum DetailRule: Sendable {
    case text(pattern: String?, longest: Int, choices: [String]?)
    case integer(ClosedRange<Int>)
    case boolean
    indirect case list(DetailRule, most: Int)
    case object(Object)

    /// An object's members: those it needs, and each one's rule. Any other member is refused.
    struct Object: Sendable {
        let required: [String]
        let members: [String: DetailRule]

        func problem(with value: JSONValue, at path: String) -> String? {
            guard let fields = value.objectValue else { return "\(path) must be an object" }
            if let missing = required.first(where: { fields[$0] == nil }) { return "\(path) needs '\(missing)'" }
            for (key, member) in fields.sorted(by: { $0.key < $1.key }) {
                guard let rule = members[key] else { return "\(path) has the unknown member '\(key.prefix(64))'" }
                if let problem = rule.problem(with: member, at: "\(path).\(key)") { return problem }
            }
            return nil
        }
    }

    func problem(with value: JSONValue, at path: String) -> String? {
        switch self {
        case .text(let pattern, let longest, let choices):
            // Counted in Unicode scalars: a character may be made of many.
            guard let text = value.stringValue, !text.isEmpty, text.unicodeScalars.count <= longest else {
                return "\(path) must be a string of 1 to \(longest) characters"
            }
            if let choices, !choices.contains(text) { return "\(path) must be one of: \(choices.joined(separator: ", "))" }
            if let pattern, text.range(of: pattern, options: .regularExpression) == nil { return "\(path) is not well formed" }
            return nil
        case .integer(let range):
            guard case .number(let number) = value, number.rounded() == number, number >= Double(range.lowerBound),
                number <= Double(range.upperBound)
            else { return "\(path) must be an integer from \(range.lowerBound) to \(range.upperBound)" }
            return nil
        case .boolean:
            guard case .bool = value else { return "\(path) must be true or false" }
            return nil
        case .list(let element, let most):
            guard let elements = value.arrayValue, elements.count <= most else { return "\(path) must be a list of at most \(most)" }
            for (index, item) in elements.enumerated() {
                if let problem = element.problem(with: item, at: "\(path)[\(index)]") { return problem }
            }
            return nil
        case .object(let object):
            return object.problem(with: value, at: path)
        }
    }
}

/// The JSON Schema subset an authorization detail type is written in: `object` (`properties`,
/// `required`; members not listed are refused, `additionalProperties` may only say so), `string`
/// (`maxLength`, up to 1024 and 256 when absent; `pattern`; `enum`), `integer` (`minimum`, `maximum`),
/// `boolean` and `array` (`items`, `maxItems` up to 100, 10 when absent). Any other keyword stops the start:
/// passed over, it would leave a value unchecked.
enum DetailSchema {
    struct Problem: Error, CustomStringConvertible {
        let file: String
        let reason: String

        var description: String { "authorization details type \(file): \(reason)" }
    }

    static func rule(of schema: JSONValue, file: String) throws -> DetailRule.Object {
        guard case .object(let object) = try rule(schema, at: "(top)", file: file),
            object.members["type"] != nil, object.required.contains("type")
        else { throw Problem(file: file, reason: "the schema must be an object that requires its 'type'") }
        return object
    }

    private static let described: Set<String> = ["title", "description"]

    private static func rule(_ schema: JSONValue, at path: String, file: String) throws -> DetailRule {
        func refuse(_ reason: String) -> Problem { Problem(file: file, reason: "\(path): \(reason)") }
        guard let fields = schema.objectValue, let type = fields["type"]?.stringValue else { throw refuse("needs a 'type'") }
        func only(_ keywords: Set<String>) throws {
            if let unknown = fields.keys.sorted().first(where: { !keywords.union(described).union(["type"]).contains($0) }) {
                throw refuse("unknown keyword '\(unknown)' for a \(type)")
            }
        }
        func bound(_ name: String, default fallback: Int, most: Int) throws -> Int {
            guard let value = fields[name] else { return fallback }
            guard case .number(let number) = value, number.rounded() == number, number >= 1, number <= Double(most) else {
                throw refuse("'\(name)' must be a whole number from 1 to \(most)")
            }
            return Int(number)
        }
        switch type {
        case "object":
            try only(["properties", "required", "additionalProperties"])
            if let additional = fields["additionalProperties"], additional != .bool(false) {
                throw refuse("'additionalProperties' may only be false: other members are always refused")
            }
            guard let properties = fields["properties"]?.objectValue, !properties.isEmpty else { throw refuse("needs 'properties'") }
            var members: [String: DetailRule] = [:]
            for (name, property) in properties { members[name] = try rule(property, at: "\(path).\(name)", file: file) }
            let required = try (fields["required"]?.arrayValue ?? []).map { name -> String in
                guard let name = name.stringValue, members[name] != nil else { throw refuse("'required' names a member it does not define") }
                return name
            }
            return .object(DetailRule.Object(required: required, members: members))
        case "string":
            try only(["maxLength", "pattern", "enum"])
            let pattern = fields["pattern"]?.stringValue
            if fields["pattern"] != nil, pattern.flatMap({ try? NSRegularExpression(pattern: $0) }) == nil {
                throw refuse("'pattern' is not a regular expression")
            }
            let choices = try fields["enum"].map { list -> [String] in
                guard let words = list.arrayValue?.compactMap(\.stringValue), words.count == list.arrayValue?.count, !words.isEmpty else {
                    throw refuse("'enum' must be a list of strings")
                }
                return words
            }
            return .text(pattern: pattern, longest: try bound("maxLength", default: 256, most: 1024), choices: choices)
        case "integer":
            try only(["minimum", "maximum"])
            func limit(_ name: String, _ fallback: Int) throws -> Int {
                guard let value = fields[name] else { return fallback }
                guard case .number(let number) = value, number.rounded() == number, abs(number) < 9_007_199_254_740_992 else {
                    throw refuse("'\(name)' must be an integer")
                }
                return Int(number)
            }
            let (low, high) = (try limit("minimum", -9_007_199_254_740_991), try limit("maximum", 9_007_199_254_740_991))
            guard low <= high else { throw refuse("'minimum' is above 'maximum'") }
            return .integer(low...high)
        case "boolean":
            try only([])
            return .boolean
        case "array":
            try only(["items", "maxItems"])
            guard let items = fields["items"] else { throw refuse("needs 'items'") }
            return .list(try rule(items, at: "\(path)[]", file: file), most: try bound("maxItems", default: 10, most: 100))
        default:
            throw refuse("the type '\(type.prefix(32))' is not one of object, string, integer, boolean, array")
        }
    }
}
