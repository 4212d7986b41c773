/// How the server writes the id by which applications know a person, so that two spellings of one
/// person are one user. An id holding `@` is an email, and emails compare case-insensitively: it is kept
/// and looked up in lower case. Any other id (a customer number, a user name) is kept exactly as given.
public enum ExternalUserID {
    /// In Unicode scalars.
    public static let longest = 256

    public static func canonical(_ id: String) -> String {
        id.contains("@") ? id.lowercased() : id
    }

    /// Whether `id` can name a user: 1 to 256 characters, none a control character. Ids go into security
    /// events and log lines: a line break would forge a line, a direction override make one read as another.
    public static func isAcceptable(_ id: String) -> Bool {
        !id.isEmpty && id.unicodeScalars.count <= longest && !ControlCharacters.held(in: id)
    }
}

/// Characters that change how the text around them reads: controls (line breaks, tabs, escapes), line and
/// paragraph separators, and the bidirectional embeddings, overrides and isolates.
public enum ControlCharacters {
    public static func held(in text: String) -> Bool {
        text.unicodeScalars.contains(where: isControl)
    }

    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: true
        default: (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
        }
    }

    /// `text` with each scalar `escaped` chooses (control characters by default) written as `\u{…}`, so
    /// that none can start a line, move the cursor or reorder what a log or a terminal shows.
    public static func escaping(_ text: String, _ escaped: (Unicode.Scalar) -> Bool = isControl) -> String {
        guard text.unicodeScalars.contains(where: escaped) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if escaped(scalar) {
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
