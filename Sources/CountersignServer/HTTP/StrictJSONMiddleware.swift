import CountersignCore
import NIOCore
import Vapor

/// Strict input on `/v1` and `/admin/v1` (DESIGN.md §6): a request body must be declared
/// `application/json` (UTF-8), sent as it is (no `Content-Encoding`: the server inflates nothing a
/// stranger compressed), and be UTF-8 JSON as `StrictJSON` reads it: no key repeated in one object, no
/// trailing comma, at most 16 levels deep and 256 values. Checked in one pass before any route reads it,
/// so a body built to be costly to decode is refused at the cost of reading it once. On the admin API a request without a body (`POST …/revoke`) needs no type. No text the
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
        guard bytes.first != 0xEF, String(validating: bytes, as: UTF8.self) != nil else {
            throw ServiceError.notValid("The body must be UTF-8 without a byte order mark.")
        }
        do {
            _ = try StrictJSON.parse(bytes)
        } catch {
            switch error {
            case .holdsNUL: throw holdsNUL
            case .notJSON: break  // each route says which shape it expected
            default: throw ServiceError.notValid("The body is refused: \(error).")
            }
        }
    }

    private static let holdsNUL = ServiceError.notValid("No text of the request may hold the NUL character (U+0000).")

    private static func hasNoBody(_ request: Request) -> Bool {
        guard request.headers.first(name: .transferEncoding) == nil else { return false }
        return (request.headers.first(name: .contentLength).flatMap(Int.init) ?? 0) == 0
    }
}
