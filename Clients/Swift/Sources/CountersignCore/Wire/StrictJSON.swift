import Foundation

/// What `JSONDecoder` lets through silently and a server that signs what it reads must not: an object
/// naming a key twice. The decoder keeps the first value where JavaScript and most parsers keep the last,
/// so `{"amount": "1", "amount": "1000"}` would be signed as 1 and paid as 1000 by a backend that reads it
/// differently.
public enum StrictJSON {
    /// The first key that appears twice in one object of `text`, or nil. Anything that is not JSON is
    /// left for the decoder to refuse.
    public static func duplicateKey(in text: String) -> String? {
        var text = text
        return text.withUTF8(duplicateKey(inUTF8:))
    }

    /// One pass over the bytes, keeping the keys of each open object.
    private static func duplicateKey(inUTF8 text: UnsafeBufferPointer<UInt8>) -> String? {
        var containers: [Object?] = []  // nil for an array
        var index = 0
        while index < text.count {
            switch text[index] {
            case UInt8(ascii: "{"): containers.append(Object())
            case UInt8(ascii: "["): containers.append(nil)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if !containers.isEmpty { containers.removeLast() }
            // In place (`containers[last]?…`), so an object's key set is never copied to be changed.
            case UInt8(ascii: ","): if !containers.isEmpty { containers[containers.count - 1]?.expectsKey = true }
            case UInt8(ascii: ":"): if !containers.isEmpty { containers[containers.count - 1]?.expectsKey = false }
            case UInt8(ascii: "\""):
                let start = index
                var escaped = false
                index += 1
                while index < text.count, text[index] != UInt8(ascii: "\"") {
                    if text[index] == UInt8(ascii: "\\") {
                        escaped = true
                        index += 1
                    }
                    index += 1
                }
                guard index < text.count else { return nil }
                guard let last = containers.indices.last, containers[last]?.expectsKey == true else { break }
                // A key with an escape is decoded, so that "a" and "\u0061" are one key; the others (every
                // key a client normally sends) are their bytes.
                let key: String
                if escaped {
                    guard let decoded = try? JSONDecoder().decode(String.self, from: Data(text[start...index])) else { return nil }
                    key = decoded
                } else {
                    key = String(decoding: UnsafeBufferPointer(rebasing: text[(start + 1)..<index]), as: UTF8.self)
                }
                guard containers[last]?.keys.insert(key).inserted == true else { return key }
                containers[last]?.expectsKey = false
            default: break
            }
            index += 1
        }
        return nil
    }

    /// An open object: the keys seen so far and whether the next string is a key.
    private struct Object {
        var keys: Set<String> = []
        var expectsKey = true
    }
}
