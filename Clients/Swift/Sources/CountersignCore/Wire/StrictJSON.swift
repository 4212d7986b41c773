import Foundation

/// JSON read as a server that signs what it reads must read it: in one pass, refusing what `JSONDecoder`
/// lets through silently. An object naming a key twice (the decoder keeps the first value where JavaScript
/// and most parsers keep the last, so `{"amount": "1", "amount": "1000"}` would be signed as 1 and paid as
/// 1000 by a backend that reads it differently), a trailing comma, an escaped NUL (no text of the API may
/// hold one, and PostgreSQL stores none), and nesting deeper or values more numerous than a request
/// needs, which keeps what a stranger's body costs to read close to what the cheapest request costs.
public enum StrictJSON {
    /// How deeply arrays and objects of a request may nest. No field of the API needs more than a few
    /// levels.
    public static let requestDepth = 16

    /// How many values (members, elements and scalars) a request may hold. Every body of the API needs
    /// a few dozen, and decoding (and a start's re-encoding of its `additional_params`) costs about a
    /// microsecond a value.
    public static let requestValues = 256

    /// Why a text was refused.
    public enum Problem: Error, Equatable, Sendable {
        case duplicateKey(String)
        case trailingComma
        case holdsNUL
        case tooDeep(limit: Int)
        case tooManyValues(limit: Int)
        case notJSON
    }

    /// The value `bytes` hold, parsed in one pass. Text the server wrote itself may be read with larger bounds.
    public static func parse(
        _ bytes: some Sequence<UInt8>, maximumDepth: Int = requestDepth, maximumValues: Int = requestValues
    ) throws(Problem) -> JSONValue {
        func parse(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, Problem> {
            var parser = Parser(text: buffer, maximumDepth: maximumDepth, maximumValues: maximumValues)
            return Result { () throws(Problem) in try parser.document() }
        }
        let result = bytes.withContiguousStorageIfAvailable(parse) ?? Array(bytes).withUnsafeBufferPointer(parse)
        return try result.get()
    }

    /// `type` decoded from `data` by `decoder`, with each `JSONValue` in it taken from one strict parse of
    /// the text rather than decoded by trying each JSON type in turn, whose cost grows with the depth.
    public static func decode<T: Decodable>(
        _ type: T.Type, from data: Data, maximumDepth: Int = requestDepth, maximumValues: Int = requestValues,
        dates: JSONDecoder.DateDecodingStrategy = .deferredToDate
    ) throws -> T {
        try decode(type, from: data, parsed: try parse(data, maximumDepth: maximumDepth, maximumValues: maximumValues), dates: dates)
    }

    /// `type` decoded from `data`, which `parse` already read as `document` (within the bounds it was read
    /// with): the text is not parsed again.
    public static func decode<T: Decodable>(
        _ type: T.Type, from data: Data, parsed document: JSONValue, dates: JSONDecoder.DateDecodingStrategy = .deferredToDate
    ) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = dates
        decoder.userInfo[JSONValue.parsedDocument] = document
        return try decoder.decode(type, from: data)
    }

    /// A recursive descent over UTF-8 bytes. The depth bound also bounds the recursion.
    private struct Parser {
        let text: UnsafeBufferPointer<UInt8>
        let maximumDepth: Int
        let maximumValues: Int
        var values = 0
        var index = 0

        init(text: UnsafeBufferPointer<UInt8>, maximumDepth: Int, maximumValues: Int) {
            self.text = text
            self.maximumDepth = maximumDepth
            self.maximumValues = maximumValues
        }

        mutating func document() throws(Problem) -> JSONValue {
            let value = try value(depth: 0)
            skipWhitespace()
            guard index == text.count else { throw .notJSON }
            return value
        }

        private var next: UInt8? { index < text.count ? text[index] : nil }

        private mutating func skipWhitespace() {
            while let byte = next, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        private mutating func value(depth: Int) throws(Problem) -> JSONValue {
            values += 1
            guard values <= maximumValues else { throw .tooManyValues(limit: maximumValues) }
            skipWhitespace()
            switch next {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case nil: throw .notJSON
            default: return .number(try number())
            }
        }

        private mutating func object(depth: Int) throws(Problem) -> JSONValue {
            guard depth <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
            index += 1
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if next == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard next == UInt8(ascii: "\"") else { throw members.isEmpty || next != UInt8(ascii: "}") ? .notJSON : .trailingComma }
                let key = try string()
                skipWhitespace()
                guard next == UInt8(ascii: ":") else { throw .notJSON }
                index += 1
                guard members.updateValue(try value(depth: depth), forKey: key) == nil else { throw .duplicateKey(key) }
                skipWhitespace()
                switch next {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"): index += 1; return .object(members)
                default: throw .notJSON
                }
            }
        }

        private mutating func array(depth: Int) throws(Problem) -> JSONValue {
            guard depth <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if next == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                if next == UInt8(ascii: "]") { throw .trailingComma }
                elements.append(try value(depth: depth))
                skipWhitespace()
                switch next {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"): index += 1; return .array(elements)
                default: throw .notJSON
                }
            }
        }

        private mutating func literal(_ word: StaticString) throws(Problem) {
            let count = word.utf8CodeUnitCount
            guard index + count <= text.count,
                  UnsafeBufferPointer(rebasing: text[index..<(index + count)]).elementsEqual(
                    UnsafeBufferPointer(start: word.utf8Start, count: count))
            else { throw .notJSON }
            index += count
        }

        /// A number as RFC 8259 writes one: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`.
        private mutating func number() throws(Problem) -> Double {
            let start = index
            if next == UInt8(ascii: "-") { index += 1 }
            if next == UInt8(ascii: "0") {
                index += 1
            } else {
                guard digits() else { throw .notJSON }
            }
            if next == UInt8(ascii: ".") {
                index += 1
                guard digits() else { throw .notJSON }
            }
            if next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
                index += 1
                if next == UInt8(ascii: "+") || next == UInt8(ascii: "-") { index += 1 }
                guard digits() else { throw .notJSON }
            }
            let literal = String(decoding: UnsafeBufferPointer(rebasing: text[start..<index]), as: UTF8.self)
            guard let value = Double(literal), value.isFinite else { throw .notJSON }
            return value
        }

        /// Skips a run of digits; whether there was one.
        private mutating func digits() -> Bool {
            let start = index
            while let byte = next, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
            return index > start
        }

        /// A string, the opening quote next. Text without escapes, every key a client normally sends, is
        /// taken as its bytes.
        private mutating func string() throws(Problem) -> String {
            index += 1
            let start = index
            while let byte = next, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                guard byte >= 0x20 else { throw .notJSON }
                index += 1
            }
            guard let stop = next else { throw .notJSON }
            if stop == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: UnsafeBufferPointer(rebasing: text[start..<(index - 1)]), as: UTF8.self)
            }
            var bytes = Array(text[start..<index])
            while let byte = next {
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return String(decoding: bytes, as: UTF8.self)
                case UInt8(ascii: "\\"): try escape(into: &bytes)
                case ..<0x20: throw .notJSON
                default: bytes.append(byte)
                }
            }
            throw .notJSON
        }

        /// The character an escape stands for, the backslash read.
        private mutating func escape(into bytes: inout [UInt8]) throws(Problem) {
            guard let letter = next else { throw .notJSON }
            index += 1
            switch letter {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(letter)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hexQuad()
                if (0xD800..<0xDC00).contains(code) {
                    // A character beyond the first plane is written as a pair of escapes; half of one is no character.
                    guard next == UInt8(ascii: "\\"), index + 1 < text.count, text[index + 1] == UInt8(ascii: "u") else { throw .notJSON }
                    index += 2
                    let low = try hexQuad()
                    guard (0xDC00..<0xE000).contains(low) else { throw .notJSON }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard code != 0 else { throw .holdsNUL }
                guard let scalar = Unicode.Scalar(code) else { throw .notJSON }
                UTF8.encode(scalar) { bytes.append($0) }
            default: throw .notJSON
            }
        }

        private mutating func hexQuad() throws(Problem) -> UInt32 {
            guard index + 4 <= text.count else { throw .notJSON }
            var code: UInt32 = 0
            for _ in 0..<4 {
                let byte = text[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw .notJSON
                }
                code = code << 4 | UInt32(digit)
                index += 1
            }
            return code
        }
    }
}

extension StrictJSON.Problem: CustomStringConvertible {
    public var description: String {
        switch self {
        case .duplicateKey(let key): "the key '\(key)' appears twice in one object"
        case .trailingComma: "a comma has no value after it"
        case .holdsNUL: "a text holds the NUL character (U+0000)"
        case .tooDeep(let limit): "arrays and objects nest more than \(limit) deep"
        case .tooManyValues(let limit): "it holds more than \(limit) values"
        case .notJSON: "it is not JSON"
        }
    }
}
