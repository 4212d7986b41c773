import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Turns every error into an HTTP status and the wire `error` object: the one place that knows which
/// status a refusal gets. Unexpected errors become a bare 500; their detail is logged with the request
/// id and never sent.
struct ErrorMiddleware: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(
        _ request: Request, context: ServerRequestContext, next: (Request, ServerRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return answer(to: error, context: context)
        }
    }

    /// The answer to a request that failed with `error`.
    private func answer(to error: any Error, context: ServerRequestContext) -> Response {
        switch error {
        case let error as ServiceError:
            var headers: HTTPFields = [:]
            if case .tooSoon(let seconds) = error.kind {
                headers[.retryAfter] = String(seconds)
                metrics.rateLimited(code: error.code)
            }
            return Self.response(status: error.kind.status, error: WireError(code: error.code, message: error.message), headers: headers)
        case let error as OAuthError:
            let body = (try? JSONEncoder.wire.encode(OAuthErrorBody(error))) ?? Data()
            return Response.wireEncoded(body, status: error.status, cacheControl: "no-store")
        case let error as DecodingError:
            // Request bodies are decoded where a bad one is refused as the client's (`Request.decodeBody`):
            // one that gets here is a stored row or state the server could not read. Its description may
            // quote the value read (a token's hash, a push token), so only where it failed is logged.
            return Self.failure(Self.whereDecodingFailed(error), context: context)
        case let error as DatabaseRowError:
            // Named by its column, never by its value.
            return Self.failure(error.description, context: context)
        case let refusal as HTTPError where refusal.status.code < 500:
            return Self.refusal(refusal)
        case is NIOTooManyBytesError:
            // A body larger than `ServerRequestContext.maxUploadSize`, found as it was read.
            return Self.response(
                status: .contentTooLarge, error: WireError(code: ErrorCode.http(status: 413), message: "The body is over the size limit."))
        case _ where DatabaseOutage.isOutage(error):
            context.logger.warning("the database could not serve the call", metadata: ["error": "\(String(reflecting: error))"])
            return Self.response(
                status: .serviceUnavailable, error: DatabaseOutage.refusal, headers: [.retryAfter: String(DatabaseOutage.retryAfter)])
        default:
            return Self.failure(String(reflecting: error), context: context)
        }
    }

    /// The server's own failure: logged with the request id, answered with a bare 500.
    private static func failure(_ description: String, context: ServerRequestContext) -> Response {
        context.logger.error("request failed", metadata: ["error": "\(description)"])
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

    /// A refusal of the HTTP layer itself (no route, a body over the size limit), in the API's words.
    private static func refusal(_ refusal: HTTPError) -> Response {
        let reason = refusal.body ?? refusal.status.reasonPhrase
        return switch refusal.status {
        case .notFound: response(status: .notFound, error: WireError(code: ErrorCode.notFound, message: "Not found."))
        case .badRequest: response(status: .badRequest, error: WireError(code: ErrorCode.clientResponseNotValid, message: reason))
        default: response(status: refusal.status, error: WireError(code: ErrorCode.http(status: refusal.status.code), message: reason))
        }
    }

    static func response(status: HTTPResponse.Status, error: WireError, headers: HTTPFields = [:]) -> Response {
        var response = Response.wireEncoded((try? JSONEncoder.wire.encode(ErrorBody(error: error))) ?? Data(), status: status)
        response.headers.append(contentsOf: headers)
        return response
    }
}

extension ServiceError.Kind {
    var status: HTTPResponse.Status {
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
