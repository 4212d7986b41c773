import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird

/// Web origins as browsers send them in `Origin`: `scheme://host[:port]`, lower-case, without the
/// scheme's default port.
enum WebOrigin {
    /// `text` in the form a browser sends; nil when it is not an http(s) origin (a path, query, user or
    /// wildcard included). Hosts are ASCII as browsers send them (an international name in punycode), or
    /// a bracketed IPv6 address; the port is 1 to 65535.
    static func normalized(_ text: String) -> String? {
        guard !text.contains("%"), let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(),
            ["http", "https"].contains(scheme), let host = parts.host?.lowercased(), isASCIIHost(host), parts.user == nil,
            parts.password == nil, parts.path.isEmpty, parts.query == nil, parts.fragment == nil
        else { return nil }
        guard let port = parts.port else { return "\(scheme)://\(host)" }
        guard (1...65535).contains(port) else { return nil }
        return port == (scheme == "https" ? 443 : 80) ? "\(scheme)://\(host)" : "\(scheme)://\(host):\(port)"
    }

    /// The origin of `url` (its scheme, host and port) in the form of `normalized`.
    static func of(url: String) -> String? {
        guard var parts = URLComponents(string: url) else { return nil }
        parts.path = ""
        parts.query = nil
        parts.fragment = nil
        return parts.string.flatMap(normalized)
    }

    private static func isASCIIHost(_ host: String) -> Bool {
        if host.hasPrefix("[") {
            return host.hasSuffix("]") && host.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        return !host.isEmpty && host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
    }
}

/// Which pages are the server's own.
struct OriginPolicy: Sendable {
    /// The origin of the server's public URL (`COUNTERSIGN_PUBLIC_URL`).
    let publicOrigin: String?
    /// Whether a page on the `Host` a request named is the server's own (development mode only).
    let hostIsOwnOrigin: Bool

    /// The `Origin` of a page on another origin than the one it called; nil for callers that are not
    /// browsers, which send no `Origin`, and for a page of this server's own origin: its public URL's.
    /// The `Host` a request names is no proof: any name an attacker points at the server's address (DNS
    /// rebinding) would make its page the server's own. Only in development mode, where the demo is
    /// opened as localhost or 127.0.0.1 alike, is a page on the `Host` it called over the public URL's
    /// scheme the server's own too (`Host` names no scheme).
    func crossOrigin(of request: Request) -> String? {
        guard let origin = request.headers[.origin] else { return nil }
        guard let normalized = WebOrigin.normalized(origin) else { return origin }
        if normalized == publicOrigin { return nil }
        guard hostIsOwnOrigin else { return normalized }
        let parts = normalized.split(separator: "://", maxSplits: 1).map(String.init)
        let sameScheme = publicOrigin.map { $0.hasPrefix(parts[0] + "://") } ?? true
        let host = request.head.authority  // HTTP/1.1's `Host`
        return sameScheme && parts.last == host?.lowercased() ? nil : normalized
    }
}

/// CORS on `/v1`, for pages of the relying party's own origin (`https://bank.example` calling
/// `https://auth.bank.example`). A preflight from an origin some application lists (admin API:
/// `allowed_origins`) is answered 204 with what it may send; from any other origin, 403 without CORS
/// headers, so the browser stops there. Answers to a listed origin carry `Access-Control-Allow-Origin`
/// with that origin (never `*`; no credentials: the API uses bearer tokens, not cookies). Which
/// application's client a page may use is checked where the client is named: a journey started from a
/// page whose origin the client's application does not list is refused (`InteractionService.start`).
///
/// Requests that are not cross-origin calls of `/v1` (nearly all) pass straight through. The middleware
/// also hands the routes the page's origin (`ServerRequestContext.crossOrigin`).
struct ApplicationCORSMiddleware: RouterMiddleware {
    let storage: Storage
    let policy: OriginPolicy

    /// How long a browser may reuse a preflight's answer.
    static let preflightMaxAge = 600

    func handle(
        _ request: Request, context: ServerRequestContext, next: (Request, ServerRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let origin = policy.crossOrigin(of: request) else { return try await next(request, context) }
        var context = context
        context.crossOrigin = origin
        guard request.uri.path.hasPrefix("/v1/") else { return try await next(request, context) }
        let listed: Bool
        do {
            // Only well-formed origins are ever listed: another (`null`, say) needs no query.
            listed = WebOrigin.normalized(origin) == origin ? try await storage.applicationOrigins.isListed(origin) : false
        } catch {
            // The database is away: the request itself will say so (503), without CORS headers.
            return try await next(request, context)
        }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            guard listed else {
                return ErrorMiddleware.response(status: .forbidden, error: WireError(
                    code: ErrorCode.originNotAllowed, message: "No application lists the origin '\(origin)'."))
            }
            var response = Response(status: .noContent)
            response.headers[.accessControlAllowMethods] = "GET, POST"
            response.headers[.accessControlAllowHeaders] = "Authorization, Content-Type, \(HTTPField.Name.countersignBrowserCredential)"
            response.headers[.accessControlMaxAge] = String(Self.preflightMaxAge)
            Self.allow(origin, on: &response)
            return response
        }
        var response = try await next(request, context)
        if listed {
            Self.allow(origin, on: &response)
            response.headers[.accessControlExposeHeaders] = "Retry-After, X-Request-Id"
        } else {
            response.headers.append(HTTPField(name: .vary, value: "Origin"))
        }
        return response
    }

    private static func allow(_ origin: String, on response: inout Response) {
        response.headers[.accessControlAllowOrigin] = origin
        response.headers.append(HTTPField(name: .vary, value: "Origin"))
    }
}
