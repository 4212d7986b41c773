/// RFC 8785 (JCS) canonical JSON: members sorted by their names' UTF-16 code units, no whitespace, strings
/// escaped only where JSON requires it, so that two parties serialise the same value to the same bytes
/// before hashing it. Numbers are written as integers when they are whole and below 2^53, the only
/// numbers the signed values hold (amounts travel as strings).
public enum CanonicalJSON {
    public static func text(_ value: JSONValue) -> String {
        var output = ""
        write(value, to: &output)
        return output
    }

    private static func write(_ value: JSONValue, to output: inout String) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .number(let number):
            if number.rounded() == number, abs(number) < 9_007_199_254_740_992 {
                output += String(Int64(number))
            } else {
                output += "\(number)"
            }
        case .string(let text): writeString(text, to: &output)
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                write(element, to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            let names = members.keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
            for (index, name) in names.enumerated() {
                if index > 0 { output += "," }
                writeString(name, to: &output)
                output += ":"
                write(members[name]!, to: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
