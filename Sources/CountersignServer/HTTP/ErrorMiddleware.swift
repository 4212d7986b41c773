import CountersignCore
import Vapor

/// Turns every error into an HTTP status and the wire `error` object: the one place that knows which
/// status a refusal gets. Unexpected errors become a bare 500; their detail is logged with the request
/// id and never sent.
struct ErrorMiddleware: Middleware {
    let metrics: ServerMetrics

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        next.respond(to: request).recover { error in answer(to: error, of: request) }
    }

    /// The answer to a request that failed with `error`.
    private func answer(to error: any Error, of request: Request) -> Response {
        switch error {
        case let error as ServiceError:
            var headers: HTTPHeaders = [:]
            if case .tooSoon(let seconds) = error.kind {
                headers.add(name: .retryAfter, value: String(seconds))
                metrics.rateLimited(code: error.code)
            }
            return Self.response(status: error.kind.status, error: WireError(code: error.code, message: error.message), headers: headers)
        case let error as DecodingError:
            // Vapor would answer 400, but request bodies are decoded where a bad one is refused as the
            // client's (`Request.decodeBody`): one that gets here is a stored row or state the server
            // could not read. Its description may quote the value read (a token's hash, a push token), so
            // only where it failed is logged.
            return Self.failure(Self.whereDecodingFailed(error), of: request)
        case let abort as any AbortError where abort.status.code < 500:
            return Self.refusal(abort)
        case _ where DatabaseOutage.isOutage(error):
            request.logger.warning("the database could not serve the call", metadata: ["error": "\(String(reflecting: error))"])
            return Self.response(
                status: .serviceUnavailable, error: DatabaseOutage.refusal, headers: [HTTPHeaders.Name.retryAfter.description: String(DatabaseOutage.retryAfter)])
        default:
            return Self.failure(error, of: request)
        }
    }

    /// The server's own failure: logged with the request id, answered with a bare 500.
    private static func failure(_ error: any Error, of request: Request) -> Response {
        failure(String(reflecting: error), of: request)
    }

    private static func failure(_ description: String, of request: Request) -> Response {
        request.logger.error("request failed", metadata: ["error": "\(description)"])
        return response(status: .internalServerError, error: WireError(code: ErrorCode.internalError, message: "Internal error."))
    }

    /// What failed to decode and where, without the value.
    private static func whereDecodingFailed(_ error: DecodingError) -> String {
        let (what, context): (String, DecodingError.Context?) = switch error {
        case .typeMismatch(let type, let context): ("not a \(type)", context)
        case .valueNotFound(let type, let context): ("no \(type)", context)
        case .keyNotFound(let key, let context): ("no key '\(key.stringValue)'", context)
        case .dataCorrupted(let context): ("corrupted data", context)
        @unknown default: ("an unknown decoding error", nil)
        }
        let path = context?.codingPath.map(\.stringValue).joined(separator: ".") ?? ""
        return "a stored value could not be decoded: \(what) at '\(path)'"
    }

    /// A refusal of the HTTP layer itself, in the API's words: an undecodable body (Vapor's 422) is the
    /// API's `400 client_response_not_valid`; a body of another type `415 unsupported_media_type`.
    private static func refusal(_ abort: any AbortError) -> Response {
        switch abort.status {
        case .notFound: response(status: .notFound, error: WireError(code: ErrorCode.notFound, message: "Not found."))
        case .badRequest, .unprocessableEntity:
            response(status: .badRequest, error: WireError(code: ErrorCode.clientResponseNotValid, message: abort.reason))
        case .unsupportedMediaType:
            response(status: .unsupportedMediaType, error: WireError(code: ErrorCode.unsupportedMediaType, message: abort.reason))
        default: response(status: abort.status, error: WireError(code: ErrorCode.http(status: Int(abort.status.code)), message: abort.reason))
        }
    }

    static func response(status: HTTPResponseStatus, error: WireError, headers: HTTPHeaders = [:]) -> Response {
        let response = Response(status: status, headers: headers)
        try? response.content.encode(ErrorBody(error: error), using: JSONEncoder.wire)
        return response
    }
}

extension ServiceError.Kind {
    var status: HTTPResponseStatus {
        switch self {
        case .invalidRequest: .badRequest
        case .unauthenticated: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .conflict: .conflict
        case .gone: .gone
        case .tooSoon: .tooManyRequests
        case .unsupportedMediaType: .unsupportedMediaType
        case .failed: .internalServerError
        }
    }
}

/// The body of a refusal that is not an interaction response.
struct ErrorBody: Encodable {
    let error: WireError
}
