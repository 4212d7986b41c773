import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Strict input on `/v1` and `/admin/v1` (DESIGN.md §6): a request body must be declared
/// `application/json` (UTF-8), sent as it is (no `Content-Encoding`: the server inflates nothing a
/// stranger compressed), and be UTF-8 JSON as `StrictJSON` reads it: no key repeated in one object, no
/// trailing comma, at most 16 levels deep and 256 values. Checked in one pass before any route reads it,
/// so a body built to be costly to decode is refused at the cost of reading it once. On the admin API a request without a body (`POST …/revoke`) needs no type. No text the
/// request carries may hold the NUL character: PostgreSQL stores no text with one (a 500 on that database,
/// where SQLite took it), and no field of the API has a use for it. No id holds one, so a path with one
/// names nothing (404); in the query or the body it is refused (400).
struct StrictJSONMiddleware: RouterMiddleware {
    /// Whether a POST, PUT or PATCH without any body must still say `application/json`.
    var typeRequiredWithoutBody = true

    func handle(
        _ request: Request, context: ServerRequestContext, next: (Request, ServerRequestContext) async throws -> Response
    ) async throws -> Response {
        if request.uri.path.contains("%00") { throw ServiceError.notFound("No such resource.") }
        if request.uri.query?.contains("%00") == true { throw Self.holdsNUL }
        guard [.post, .put, .patch].contains(request.method) else { return try await next(request, context) }
        if !typeRequiredWithoutBody, request.headers[.contentType] == nil, Self.hasNoBody(request) {
            return try await next(request, context)
        }
        guard Self.declaresJSON(request.headers), Self.isSentAsIs(request.headers) else {
            throw ServiceError(
                .unsupportedMediaType, ErrorCode.unsupportedMediaType,
                "The body must be JSON sent as application/json (UTF-8), without a Content-Encoding.")
        }
        // Collected and parsed once here; the route decodes the same bytes from this parse.
        var request = request
        var context = context
        context.parsedBody = try Self.check(try await request.collectBody(upTo: context.maxUploadSize))
        return try await next(request, context)
    }

    /// Whether the body is declared `application/json`, in UTF-8 if a charset is named. The exact type the
    /// SDKs send is taken as it is, without parsing the header into its parts.
    private static func declaresJSON(_ headers: HTTPFields) -> Bool {
        guard let declared = headers[.contentType] else { return false }
        if declared == "application/json" { return true }
        var parts = declared.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard parts.removeFirst() == "application/json" else { return false }
        return parts.allSatisfy { parameter in
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { return false }
            return pair[0] != "charset" || pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == "utf-8"
        }
    }

    /// Whether the body comes without a content coding (`identity`, the absence of one, is the only one).
    private static func isSentAsIs(_ headers: HTTPFields) -> Bool {
        headers[values: .contentEncoding].allSatisfy { $0.trimmingCharacters(in: .whitespaces).lowercased() == "identity" }
    }

    /// The body parsed; nil when it is not JSON (each route says which shape it expected).
    private static func check(_ body: ByteBuffer) throws -> JSONValue? {
        let bytes = body.readableBytesView
        guard bytes.first != 0xEF, String(validating: bytes, as: UTF8.self) != nil else {
            throw ServiceError.notValid("The body must be UTF-8 without a byte order mark.")
        }
        do {
            return try StrictJSON.parse(bytes)
        } catch {
            switch error {
            case .holdsNUL: throw holdsNUL
            case .notJSON: return nil
            default: throw ServiceError.notValid("The body is refused: \(error).")
            }
        }
    }

    private static let holdsNUL = ServiceError.notValid("No text of the request may hold the NUL character (U+0000).")

    private static func hasNoBody(_ request: Request) -> Bool {
        guard request.headers[.transferEncoding] == nil else { return false }
        return (request.headers[.contentLength].flatMap(Int.init) ?? 0) == 0
    }
}
