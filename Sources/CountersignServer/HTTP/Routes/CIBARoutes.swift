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
        try await Self.answeringInOAuthTerms {
            let form = try await Self.form(of: request, context)
            return try .wire(try await ciba.authorize(form, origin: RequestOrigin(request, context), logger: context.logger), cacheControl: "no-store")
        }
    }

    func token(request: Request, context: ServerRequestContext) async throws -> Response {
        try await Self.answeringInOAuthTerms {
            let form = try await Self.form(of: request, context)
            return try .wire(try await ciba.token(form, logger: context.logger), cacheControl: "no-store")
        }
    }

    /// Runs `answer`; a body over the size limit or a database out of reach is refused as OAuth says, so a
    /// client's OAuth library reads every refusal of these endpoints. Other failures stay the server's own.
    private static func answeringInOAuthTerms(_ answer: () async throws -> Response) async throws -> Response {
        do {
            return try await answer()
        } catch is NIOTooManyBytesError {
            throw OAuthError(status: .contentTooLarge, code: "invalid_request", description: "The body is over the size limit.")
        } catch where DatabaseOutage.isOutage(error) {
            throw OAuthError(
                status: .serviceUnavailable, code: "temporarily_unavailable", description: "The database cannot be reached; try again shortly.")
        }
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
