import CountersignCore
import Foundation
import NIOCore

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

/// Reading JSON through `StrictJSON`: one pass, with every free-form value (`JSONValue`) taken from it.
enum WireJSON {
    /// A request body as `Body`, within the bounds of a request; `parsed` is the body as
    /// `StrictJSONMiddleware` parsed it, when it did, so that it is not parsed again.
    static func request<Body: Decodable>(_ type: Body.Type, from body: ByteBuffer?, parsed: JSONValue? = nil) throws -> Body {
        let data = body.map { Data($0.readableBytesView) } ?? Data()
        if let parsed { return try StrictJSON.decode(type, from: data, parsed: parsed, dates: .iso8601) }
        return try StrictJSON.decode(type, from: data, dates: .iso8601)
    }

    /// JSON text the server wrote itself as `T`: it nests a request's values a few levels down, so it is
    /// read with looser bounds.
    static func stored<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try StrictJSON.decode(type, from: data, maximumDepth: storedDepth, maximumValues: .max, dates: .iso8601)
    }

    /// Free-form JSON text the server wrote itself, parsed alone: no type to decode, so no decoder.
    static func stored(_ text: String) throws -> JSONValue {
        try StrictJSON.parse(text.utf8, maximumDepth: storedDepth, maximumValues: .max)
    }

    private static let storedDepth = 64
}
