import CountersignCore
import Vapor

/// Strict input on `/v1` (DESIGN.md §6): a request body must be declared `application/json` (UTF-8) and
/// be UTF-8 JSON without a key repeated in one object. Checked before any route reads it.
struct StrictJSONMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard [.POST, .PUT, .PATCH].contains(request.method) else { return try await next.respond(to: request) }
        guard let type = request.headers.contentType, type.type == "application", type.subType == "json",
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
}
