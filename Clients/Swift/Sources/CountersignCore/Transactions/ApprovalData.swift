import Foundation

/// Transaction details a person approves on the phone (DESIGN.md §3, F14): a flat object of at most
/// ten string values of at most 128 characters, under keys of at most 64 (so the details fit the phone's
/// screen), whose keys and values use only ASCII letters, digits, spaces and `. , _ -`.
///
/// Because of that alphabet the canonical JSON needs no escaping, so the server and every SDK derive
/// the same bytes from the same details.
public struct ApprovalData: Sendable, Equatable, Codable {
    /// The most properties an approval may carry.
    public static let maximumProperties = 10
    /// The longest value, in characters.
    public static let maximumValueLength = 128
    /// The longest key, in characters.
    public static let maximumKeyLength = 64

    public let values: [String: String]

    /// Why approval data was refused; the message names the key and the rule.
    public struct Violation: Error, Equatable, CustomStringConvertible {
        public let key: String?
        public let rule: String
        public var description: String {
            if let key { return "approval_data key '\(key)': \(rule)" }
            return "approval_data: \(rule)"
        }
    }

    /// Validates approval data as it arrives in JSON, which must be an object.
    public init(json value: JSONValue) throws(Violation) {
        guard let members = value.objectValue else {
            throw Violation(key: nil, rule: "must be a JSON object, not \(value.typeName)")
        }
        try self.init(json: members)
    }

    /// Validates JSON approval data.
    public init(json: [String: JSONValue]) throws(Violation) {
        var strings: [String: String] = [:]
        for (key, value) in json {
            guard let string = value.stringValue else {
                throw Violation(key: key, rule: "value must be a string, not \(value.typeName)")
            }
            strings[key] = string
        }
        try self.init(strings)
    }

    /// Validates approval data given as strings.
    public init(_ values: [String: String]) throws(Violation) {
        guard values.count <= Self.maximumProperties else {
            throw Violation(key: nil, rule: "at most \(Self.maximumProperties) properties are allowed, got \(values.count)")
        }
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            guard !key.isEmpty else { throw Violation(key: key, rule: "keys must not be empty") }
            guard key.count <= Self.maximumKeyLength else {
                throw Violation(key: String(key.prefix(Self.maximumKeyLength)) + "…", rule: "key must be at most \(Self.maximumKeyLength) characters, got \(key.count)")
            }
            guard Self.usesAllowedCharacters(key) else {
                throw Violation(key: key, rule: "key may contain only letters, digits, spaces and . , _ -")
            }
            guard value.count <= Self.maximumValueLength else {
                throw Violation(key: key, rule: "value must be at most \(Self.maximumValueLength) characters, got \(value.count)")
            }
            guard Self.usesAllowedCharacters(value) else {
                throw Violation(key: key, rule: "value may contain only letters, digits, spaces and . , _ -")
            }
        }
        self.values = values
    }

    /// Decodes a JSON object of strings, applying the same rules.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.singleValueContainer().decode([String: String].self)
        do {
            try self.init(values)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    /// Reads approval data stored as JSON text (e.g. its canonical JSON), applying the rules.
    public init(jsonText: String) throws {
        self = try JSONDecoder().decode(ApprovalData.self, from: Data(jsonText.utf8))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(values)
    }

    /// The canonical JSON: keys sorted, no whitespace, UTF-8.
    public var canonicalJSON: String {
        "{" + values.sorted(by: { $0.key < $1.key }).map { "\"\($0.key)\":\"\($0.value)\"" }.joined(separator: ",") + "}"
    }

    /// The data as a JSON object.
    public var json: JSONValue {
        .object(values.mapValues { .string($0) })
    }

    private static func usesAllowedCharacters(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", " ", ".", ",", "_", "-": true
            default: false
            }
        }
    }
}
