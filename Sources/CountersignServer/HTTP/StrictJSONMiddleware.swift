import CountersignCore
import Vapor

/// Strict input on `/v1` and `/admin/v1` (DESIGN.md §6): a request body must be declared
/// `application/json` (UTF-8) and be UTF-8 JSON without a key repeated in one object. Checked before any
/// route reads it. On the admin API a request without a body (`POST …/revoke`) needs no type.
struct StrictJSONMiddleware: AsyncMiddleware {
    /// Whether a POST, PUT or PATCH without any body must still say `application/json`.
    var typeRequiredWithoutBody = true

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard [.POST, .PUT, .PATCH].contains(request.method) else { return try await next.respond(to: request) }
        if !typeRequiredWithoutBody, request.headers.contentType == nil, Self.hasNoBody(request) {
            return try await next.respond(to: request)
        }
        guard let type = request.headers.contentType, type.type.lowercased() == "application", type.subType.lowercased() == "json",
            type.parameters["charset"].map({ $0.lowercased() == "utf-8" }) ?? true
        else {
            throw ServiceError(.unsupportedMediaType, ErrorCode.unsupportedMediaType, "The body must be JSON sent as application/json (UTF-8).")
        }
        if let body = try await request.body.collect(max: request.application.routes.defaultMaxBodySize.value).get() {
            let bytes = body.readableBytesView
            guard bytes.first != 0xEF, let text = String(validating: bytes, as: UTF8.self) else {
                throw ServiceError.notValid("The body must be UTF-8 without a byte order mark.")
            }
            if let key = StrictJSON.duplicateKey(in: text) {
                throw ServiceError.notValid("The key '\(key)' appears twice in one object.")
            }
        }
        return try await next.respond(to: request)
    }

    private static func hasNoBody(_ request: Request) -> Bool {
        guard request.headers.first(name: .transferEncoding) == nil else { return false }
        return (request.headers.first(name: .contentLength).flatMap(Int.init) ?? 0) == 0
    }
}
