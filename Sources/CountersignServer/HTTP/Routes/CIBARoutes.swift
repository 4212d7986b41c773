import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// OpenID CIBA's endpoints (DESIGN.md §7): form-encoded requests from backend clients, OAuth answers,
/// never cached.
struct CIBARoutes: RouteGroup {
    let ciba: CIBAService

    func register(on router: Router<ServerRequestContext>) {
        router.post(RouterPath(CIBAService.backchannelPath), use: backchannelAuthentication)
        router.post(RouterPath(CIBAService.tokenPath), use: token)
    }

    func backchannelAuthentication(request: Request, context: ServerRequestContext) async throws -> Response {
        let form = try await Self.form(of: request, context)
        return try .wire(try await ciba.authorize(form, origin: RequestOrigin(request, context), logger: context.logger), cacheControl: "no-store")
    }

    func token(request: Request, context: ServerRequestContext) async throws -> Response {
        let form = try await Self.form(of: request, context)
        return try .wire(try await ciba.token(form, logger: context.logger), cacheControl: "no-store")
    }

    /// The body's parameters; it must be declared `application/x-www-form-urlencoded`.
    private static func form(of request: Request, _ context: ServerRequestContext) async throws -> [String: String] {
        let declared = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard declared == "application/x-www-form-urlencoded" else {
            throw OAuthError.invalidRequest("The body must be sent as application/x-www-form-urlencoded.")
        }
        let body = try await request.collectedBody(context)
        return try FormBody.parameters(Data(body.readableBytesView))
    }
}
