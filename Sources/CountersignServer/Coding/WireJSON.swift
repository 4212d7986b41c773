import CountersignCore
import Foundation

extension JSONEncoder {
    /// The encoder for everything the server writes as JSON (responses, events, tokens' claims, a run's
    /// state, stored columns): stable key order, dates as RFC 3339.
    static let wire: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()
}

extension JSONEncoder {
    /// `value` as JSON text, for a column that stores it.
    func text(_ value: JSONValue) -> String {
        String(decoding: (try? encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }
}

extension JSONDecoder {
    /// The decoder matching `JSONEncoder.wire`.
    static let wire: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}
