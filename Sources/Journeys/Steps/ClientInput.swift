import CountersignCore

/// Reads a step's client input, refusing missing or mistyped fields as `client_response_not_valid`.
struct ClientInput {
    let fields: [String: JSONValue]

    init(_ input: JSONValue?) throws(ClientResponseNotValid) {
        guard let fields = input?.objectValue else { throw ClientResponseNotValid("the input must be a JSON object") }
        self.fields = fields
    }

    /// A non-empty string field.
    func string(_ key: String) throws(ClientResponseNotValid) -> String {
        guard let value = fields[key] else { throw ClientResponseNotValid("missing field '\(key)'") }
        guard let text = value.stringValue, !text.isEmpty else {
            throw ClientResponseNotValid("field '\(key)' must be a non-empty string")
        }
        return text
    }

    /// A non-empty name of at most 128 printable ASCII characters (no space): what a phone calls a key,
    /// which evidence and the admin API show as it was given.
    func name(_ key: String) throws(ClientResponseNotValid) -> String {
        let text = try string(key)
        guard text.utf8.count <= 128, text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw ClientResponseNotValid("field '\(key)' must be at most 128 printable ASCII characters, without spaces")
        }
        return text
    }

    /// A string field that may be absent.
    func optionalString(_ key: String) throws(ClientResponseNotValid) -> String? {
        guard let value = fields[key], value != .null else { return nil }
        guard let text = value.stringValue else { throw ClientResponseNotValid("field '\(key)' must be a string") }
        return text
    }

    /// An object field.
    func object(_ key: String) throws(ClientResponseNotValid) -> ClientInput {
        guard let value = fields[key] else { throw ClientResponseNotValid("missing field '\(key)'") }
        guard value.objectValue != nil else { throw ClientResponseNotValid("field '\(key)' must be an object") }
        return try ClientInput(value)
    }

    /// A public key field, parsed.
    func publicKey(_ key: String, allowRSA: Bool) throws(ClientResponseNotValid) -> VerifyingKey {
        let text = try string(key)
        do {
            return try VerifyingKey(base64: text, allowRSA: allowRSA)
        } catch {
            throw ClientResponseNotValid("field '\(key)': \(error.description)")
        }
    }
}

extension WireError {
    static func invalidCredentials(_ message: String) -> WireError {
        WireError(code: ErrorCode.invalidCredentials, message: message)
    }
}
