import CountersignCore

/// The JSON Schema subset forms use: an object whose `properties` are strings, numbers, integers or
/// booleans (strings may have `format: email`, accepted lower-cased), and a `required` list.
enum FormSchema {
    static let propertyTypes: Set<String> = ["string", "number", "integer", "boolean"]

    /// What is wrong with `schema`, or nil when a form can use it.
    static func problem(in schema: JSONValue) -> String? {
        guard schema["type"]?.stringValue == "object", let properties = schema["properties"]?.objectValue else {
            return "a form schema is an object schema with 'properties'"
        }
        // A keyword the checks do not know would be passed over: a misspelt `required` would make every
        // field optional.
        if let unknown = unknownKeyword(of: schema, knowing: schemaKeywords) { return "unknown keyword '\(unknown)'" }
        for (name, property) in properties.sorted(by: { $0.key < $1.key }) {
            guard let type = property["type"]?.stringValue, propertyTypes.contains(type) else {
                return "property '\(name)' needs a type of string, number, integer or boolean"
            }
            if let unknown = unknownKeyword(of: property, knowing: propertyKeywords) {
                return "property '\(name)': unknown keyword '\(unknown)'"
            }
            if let format = property["format"], format != "email" || type != "string" {
                return "property '\(name)': the only format is 'email', of a string"
            }
        }
        if let required = schema["required"] {
            guard let names = required.arrayValue else { return "'required' must be a list of property names" }
            for name in names {
                guard let name = name.stringValue, properties[name] != nil else {
                    return "'required' lists a property the schema does not define"
                }
            }
        }
        return nil
    }

    private static let schemaKeywords: Set<String> = ["type", "properties", "required", "title", "description"]
    private static let propertyKeywords: Set<String> = ["type", "format", "title", "description"]

    /// The first keyword of `object`, in name order, that is not one of `known`.
    private static func unknownKeyword(of object: JSONValue, knowing known: Set<String>) -> String? {
        (object.objectValue ?? [:]).keys.sorted().first { !known.contains($0) }
    }

    /// The declared fields of `input`, or the reason it does not satisfy `schema`.
    static func validate(_ input: JSONValue?, against schema: JSONValue) -> Result<[String: JSONValue], WireError> {
        func invalid(_ message: String) -> Result<[String: JSONValue], WireError> {
            .failure(WireError(code: ErrorCode.clientResponseNotValid, message: message))
        }
        guard let fields = input?.objectValue else { return invalid("the form answer must be a JSON object") }
        let properties = schema["properties"]?.objectValue ?? [:]
        for name in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
            guard let value = fields[name], value != .null, value != .string("") else {
                return invalid("missing required field '\(name)'")
            }
        }
        var accepted: [String: JSONValue] = [:]
        for (name, property) in properties {
            guard let value = fields[name], value != .null else { continue }
            switch (property["type"]?.stringValue, value) {
            case ("string", .string(let text)):
                if property["format"]?.stringValue == "email" {
                    guard isEmailAddress(text) else { return invalid("field '\(name)' must be an email address") }
                    // Emails compare case-insensitively everywhere: the journey reads them lower-cased.
                    accepted[name] = .string(text.lowercased())
                    continue
                }
            case ("number", .number), ("boolean", .bool): break
            case ("integer", .number(let number)) where number.rounded() == number: break
            default:
                return invalid("field '\(name)' must be of type \(property["type"]?.stringValue ?? "?")")
            }
            accepted[name] = value
        }
        return .success(accepted)
    }

    private static func isEmailAddress(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !text.contains(" ")
    }
}
