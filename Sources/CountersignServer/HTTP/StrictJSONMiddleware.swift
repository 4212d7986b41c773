import CountersignCore
import NIOCore
import Vapor

/// Strict input on `/v1` and `/admin/v1` (DESIGN.md §6): a request body must be declared
/// `application/json` (UTF-8), sent as it is (no `Content-Encoding`: the server inflates nothing a
/// stranger compressed), and be UTF-8 JSON without a key repeated in one object. Checked before any route
/// reads it. On the admin API a request without a body (`POST …/revoke`) needs no type. No text the
/// request carries may hold the NUL character: PostgreSQL stores no text with one (a 500 on that database,
/// where SQLite took it), and no field of the API has a use for it. No id holds one, so a path with one
/// names nothing (404); in the query or the body it is refused (400).
struct StrictJSONMiddleware: Middleware {
    /// Whether a POST, PUT or PATCH without any body must still say `application/json`.
    var typeRequiredWithoutBody = true

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        if request.url.path.contains("%00") { return request.eventLoop.makeFailedFuture(ServiceError.notFound("No such resource.")) }
        if request.url.query?.contains("%00") == true { return request.eventLoop.makeFailedFuture(Self.holdsNUL) }
        guard [.POST, .PUT, .PATCH].contains(request.method) else { return next.respond(to: request) }
        if !typeRequiredWithoutBody, request.headers.contentType == nil, Self.hasNoBody(request) {
            return next.respond(to: request)
        }
        guard Self.declaresJSON(request.headers), Self.isSentAsIs(request.headers) else {
            return request.eventLoop.makeFailedFuture(ServiceError(
                .unsupportedMediaType, ErrorCode.unsupportedMediaType,
                "The body must be JSON sent as application/json (UTF-8), without a Content-Encoding."))
        }
        return request.body.collect(max: request.application.routes.defaultMaxBodySize.value)
            .flatMapThrowing { body in try body.map(Self.check) }
            .flatMap { next.respond(to: request) }
    }

    /// Whether the body is declared `application/json`, in UTF-8 if a charset is named. The exact type the
    /// SDKs send is taken as it is, without parsing the header into its parts.
    private static func declaresJSON(_ headers: HTTPHeaders) -> Bool {
        if headers.first(name: .contentType) == "application/json" { return true }
        guard let type = headers.contentType else { return false }
        return type.type.lowercased() == "application" && type.subType.lowercased() == "json"
            && type.parameters["charset"].map({ $0.lowercased() == "utf-8" }) ?? true
    }

    /// Whether the body comes without a content coding (`identity`, the absence of one, is the only one).
    private static func isSentAsIs(_ headers: HTTPHeaders) -> Bool {
        headers[.contentEncoding].allSatisfy { $0.trimmingCharacters(in: .whitespaces).lowercased() == "identity" }
    }

    private static func check(_ body: ByteBuffer) throws {
        let bytes = body.readableBytesView
        guard bytes.first != 0xEF, let text = String(validating: bytes, as: UTF8.self) else {
            throw ServiceError.notValid("The body must be UTF-8 without a byte order mark.")
        }
        if let key = StrictJSON.duplicateKey(in: text) {
            throw ServiceError.notValid("The key '\(key)' appears twice in one object.")
        }
        if escapesNUL(bytes) { throw holdsNUL }
    }

    private static let holdsNUL = ServiceError.notValid("No text of the request may hold the NUL character (U+0000).")

    /// Whether a string of the JSON text holds NUL, which JSON carries only escaped, as `\u0000`. After a
    /// run of backslashes of odd length, `u0000` is that escape; after one of even length, the backslashes
    /// escape one another.
    private static func escapesNUL(_ bytes: ByteBufferView) -> Bool {
        var backslashes = 0
        for index in bytes.indices {
            if bytes[index] == UInt8(ascii: "\\") {
                backslashes += 1
                continue
            }
            if backslashes % 2 == 1, bytes[index...].starts(with: "u0000".utf8) { return true }
            backslashes = 0
        }
        return false
    }

    private static func hasNoBody(_ request: Request) -> Bool {
        guard request.headers.first(name: .transferEncoding) == nil else { return false }
        return (request.headers.first(name: .contentLength).flatMap(Int.init) ?? 0) == 0
    }
}
