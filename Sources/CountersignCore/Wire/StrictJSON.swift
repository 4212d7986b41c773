import Foundation

/// What `JSONDecoder` lets through silently and a server that signs what it reads must not: an object
/// naming a key twice. The decoder keeps the first value where JavaScript and most parsers keep the last,
/// so `{"amount": "1", "amount": "1000"}` would be signed as 1 and paid as 1000 by a backend that reads it
/// differently.
public enum StrictJSON {
    /// The first key that appears twice in one object of `text`, or nil. Anything that is not JSON is
    /// left for the decoder to refuse.
    public static func duplicateKey(in text: some Collection<UInt8>) -> String? {
        var containers: [Object?] = []  // nil for an array
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "{"): containers.append(Object())
            case UInt8(ascii: "["): containers.append(nil)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if !containers.isEmpty { containers.removeLast() }
            case UInt8(ascii: ","): if var object = containers.last ?? nil { object.expectsKey = true; containers[containers.count - 1] = object }
            case UInt8(ascii: ":"): if var object = containers.last ?? nil { object.expectsKey = false; containers[containers.count - 1] = object }
            case UInt8(ascii: "\""):
                let start = index
                var escaped = false
                index = text.index(after: index)
                while index < text.endIndex, text[index] != UInt8(ascii: "\"") {
                    if text[index] == UInt8(ascii: "\\") {
                        escaped = true
                        index = text.index(after: index)
                    }
                    if index < text.endIndex { index = text.index(after: index) }
                }
                guard index < text.endIndex else { return nil }
                if var object = containers.last ?? nil, object.expectsKey {
                    // A key with an escape is decoded, so that "a" and "\u0061" are one key; the others (every
                    // key a client normally sends) are their bytes.
                    let key: String
                    if escaped {
                        guard let decoded = try? JSONDecoder().decode(String.self, from: Data(text[start...index])) else { return nil }
                        key = decoded
                    } else {
                        key = String(decoding: text[text.index(after: start)..<index], as: UTF8.self)
                    }
                    guard object.keys.insert(key).inserted else { return key }
                    object.expectsKey = false
                    containers[containers.count - 1] = object
                }
            default: break
            }
            index = text.index(after: index)
        }
        return nil
    }

    /// An open object: the keys seen so far and whether the next string is a key.
    private struct Object {
        var keys: Set<String> = []
        var expectsKey = true
    }
}
