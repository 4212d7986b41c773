import CountersignCore
import Foundation
import Vapor

extension Response {
    /// A JSON response encoded as the server encodes everything it sends.
    static func wire(_ body: some Encodable, status: HTTPResponseStatus = .ok, cacheControl: String? = nil) throws -> Response {
        let response = Response(status: status)
        try response.content.encode(body, using: JSONEncoder.wire)
        if let cacheControl { response.headers.replaceOrAdd(name: .cacheControl, value: cacheControl) }
        return response
    }

    /// A JSON response from a body already encoded with `JSONEncoder.wire`.
    static func wireEncoded(_ body: Data, status: HTTPResponseStatus = .ok, cacheControl: String? = nil) -> Response {
        var headers: HTTPHeaders = [:]
        headers.contentType = .json
        if let cacheControl { headers.replaceOrAdd(name: .cacheControl, value: cacheControl) }
        return Response(status: status, headers: headers, body: .init(data: body))
    }
}

extension Request {
    /// The request's body as `Body`. A body that is not JSON of that shape is the client's fault, `400
    /// client_response_not_valid`; any other decoding error is the server's own (a stored row or state it
    /// could not read), which `ErrorMiddleware` answers with a 500.
    func decodeBody<Body: Decodable>(_ type: Body.Type) throws -> Body {
        do {
            return try WireJSON.request(Body.self, from: body.data)
        } catch is DecodingError, is StrictJSON.Problem {
            throw ServiceError.notValid("The request body is not valid JSON of the expected shape.")
        }
    }
}
