/// The OpenID Provider Metadata that token verification needs, with the fields OpenID libraries require.
///
/// The token reaches the browser straight from the orchestration API when the journey succeeds, with no
/// authorization code to exchange: in OpenID's terms an `id_token` response by the implicit grant. There
/// is no authorization or token endpoint; a relying party uses this document to find the issuer and
/// the keys.
struct DiscoveryDocument: Encodable {
    let issuer: String
    let jwksURI: String
    let responseTypesSupported = ["id_token"]
    let grantTypesSupported = ["implicit"]
    let subjectTypesSupported = ["public"]
    let idTokenSigningAlgValuesSupported = ["ES256"]
    let claimsSupported: [String]

    enum CodingKeys: String, CodingKey {
        case issuer
        case jwksURI = "jwks_uri"
        case responseTypesSupported = "response_types_supported"
        case grantTypesSupported = "grant_types_supported"
        case subjectTypesSupported = "subject_types_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case claimsSupported = "claims_supported"
    }
}
