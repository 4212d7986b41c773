import CountersignCore
import Vapor

/// Turns every error into the wire `error` object. Unexpected errors become a bare 500; their detail is
/// logged with the request id and never sent.
struct APIErrorMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        do {
            return try await next.respond(to: request)
        } catch let error as APIError {
            return Self.response(status: error.status, error: error.error, headers: error.headers)
        } catch is DecodingError {
            return Self.response(status: .badRequest, error: WireError(
                code: ErrorCode.clientResponseNotValid, message: "The request body is not valid JSON of the expected shape."))
        } catch let abort as any AbortError where abort.status == .notFound {
            return Self.response(status: .notFound, error: WireError(code: ErrorCode.notFound, message: "Not found."))
        } catch let abort as any AbortError where abort.status.code < 500 {
            return Self.response(status: abort.status, error: WireError(
                code: abort.status == .badRequest ? ErrorCode.clientResponseNotValid : "http_\(abort.status.code)",
                message: abort.reason))
        } catch {
            request.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            return Self.response(status: .internalServerError, error: WireError(
                code: ErrorCode.internalError, message: "Internal error."))
        }
    }

    static func response(status: HTTPResponseStatus, error: WireError, headers: HTTPHeaders = [:]) -> Response {
        let response = Response(status: status, headers: headers)
        try? response.content.encode(ErrorBody(error: error), using: JSONEncoder.wire)
        return response
    }
}

extension Response {
    /// A JSON response encoded as the server encodes everything it sends.
    static func wire(_ body: some Encodable, status: HTTPResponseStatus = .ok, cacheControl: String? = nil) throws -> Response {
        let response = Response(status: status)
        try response.content.encode(body, using: JSONEncoder.wire)
        if let cacheControl { response.headers.replaceOrAdd(name: .cacheControl, value: cacheControl) }
        return response
    }
}

extension JSONEncoder {
    /// The encoder for everything the server sends: stable key order, dates as RFC 3339.
    static let wire: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()
}

extension JSONDecoder {
    /// The decoder matching `JSONEncoder.wire`.
    static let wire: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}
