/// The subset of OpenID Provider Metadata that token verification needs.
struct DiscoveryDocument: Encodable {
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
