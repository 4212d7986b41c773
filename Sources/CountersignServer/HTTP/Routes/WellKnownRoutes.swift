import Foundation
import Hummingbird
import JWTKit

/// Token verification for relying parties: OpenID discovery and the JWKS, both served from memory. Both
/// are public and carry no credentials, so any page may read them (`Access-Control-Allow-Origin: *`), as
/// browser OpenID libraries do.
struct WellKnownRoutes: RouteGroup {
    let tokenIssuer: TokenIssuer
    /// The discovery document, encoded once: it changes only with the configuration.
    let discoveryBody: Data

    init(issuer: String, tokenIssuer: TokenIssuer, detailTypes: AuthorizationDetailTypes) throws {
        self.tokenIssuer = tokenIssuer
        discoveryBody = try JSONEncoder.wire.encode(DiscoveryDocument(
            issuer: issuer, detailTypes: detailTypes,
            claimsSupported: [
                "iss", "aud", "sub", "external_user_id", "iat", "exp", "auth_time", "jti", "amr", "device_id",
                "journey_id", "approval_data",
            ]))
    }

    func register(on router: Router<ServerRequestContext>) {
        let wellKnown = router.group(".well-known")
        wellKnown.get("openid-configuration") { _, _ in Self.readableAnywhere(Response.wireEncoded(discoveryBody)) }
        wellKnown.get("jwks.json") { _, _ in
            Self.readableAnywhere(Response.wireEncoded(try await tokenIssuer.publishedKeys(), cacheControl: "public, max-age=\(TokenIssuer.jwksMaxAge)"))
        }
    }

    private static func readableAnywhere(_ response: Response) -> Response {
        var response = response
        response.headers[.accessControlAllowOrigin] = "*"
        return response
    }
}
