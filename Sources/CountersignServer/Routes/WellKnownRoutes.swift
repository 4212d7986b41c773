import JWTKit
import Vapor

/// Token verification for relying parties: OpenID discovery and the JWKS.
struct WellKnownRoutes: RouteCollection {
    let issuer: String
    let tokenIssuer: TokenIssuer

    func boot(routes: any RoutesBuilder) throws {
        let wellKnown = routes.grouped(".well-known")
        wellKnown.get("openid-configuration", use: discovery)
        wellKnown.get("jwks.json", use: jwks)
    }

    func discovery(request: Request) async throws -> Response {
        let document = DiscoveryDocument(
            issuer: issuer, jwksURI: "\(issuer)/.well-known/jwks.json",
            idTokenSigningAlgValuesSupported: ["ES256"], subjectTypesSupported: ["public"],
            claimsSupported: [
                "iss", "aud", "sub", "external_user_id", "iat", "exp", "auth_time", "jti", "amr", "device_id",
                "journey_id", "approval_data",
            ])
        return try .wire(document)
    }

    func jwks(request: Request) async throws -> Response {
        try .wire(try await tokenIssuer.publishedKeys(), cacheControl: "public, max-age=300")
    }
}

/// The subset of OpenID Provider Metadata that token verification needs.
struct DiscoveryDocument: Content {
    let issuer: String
    let jwksURI: String
    let idTokenSigningAlgValuesSupported: [String]
    let subjectTypesSupported: [String]
    let claimsSupported: [String]

    enum CodingKeys: String, CodingKey {
        case issuer
        case jwksURI = "jwks_uri"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case subjectTypesSupported = "subject_types_supported"
        case claimsSupported = "claims_supported"
    }
}
