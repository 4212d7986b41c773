/// The OpenID Provider Metadata: what token verification needs, with the fields OpenID libraries require,
/// and OpenID CIBA's endpoints for backend clients (DESIGN.md §7).
///
/// A browser's token reaches it straight from the orchestration API when the journey succeeds, with no
/// authorization code to exchange: in OpenID's terms an `id_token` response by the implicit grant. A backend
/// client redeems its CIBA request at the token endpoint, authenticated with `private_key_jwt`.
struct DiscoveryDocument: Encodable {
    let issuer: String
    let jwksURI: String
    let tokenEndpoint: String
    let backchannelAuthenticationEndpoint: String
    let responseTypesSupported = ["id_token"]
    let grantTypesSupported = ["implicit", CIBAService.grantType]
    let subjectTypesSupported = ["public"]
    let scopesSupported = ["openid"]
    let idTokenSigningAlgValuesSupported = ["ES256"]
    let tokenEndpointAuthMethodsSupported = ["private_key_jwt"]
    let tokenEndpointAuthSigningAlgValuesSupported = BackendClientRegistration.signingAlgorithms
    let backchannelTokenDeliveryModesSupported = TokenDeliveryMode.allCases.map(\.rawValue)
    let backchannelAuthenticationRequestSigningAlgValuesSupported = BackendClientRegistration.signingAlgorithms
    let backchannelUserCodeParameterSupported = false
    let authorizationDetailsTypesSupported: [String]
    let claimsSupported: [String]

    init(issuer: String, detailTypes: AuthorizationDetailTypes, claimsSupported: [String]) {
        authorizationDetailsTypesSupported = detailTypes.names.sorted()
        self.issuer = issuer
        jwksURI = "\(issuer)/.well-known/jwks.json"
        tokenEndpoint = issuer + CIBAService.tokenPath
        backchannelAuthenticationEndpoint = issuer + CIBAService.backchannelPath
        self.claimsSupported = claimsSupported
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case jwksURI = "jwks_uri"
        case tokenEndpoint = "token_endpoint"
        case backchannelAuthenticationEndpoint = "backchannel_authentication_endpoint"
        case responseTypesSupported = "response_types_supported"
        case grantTypesSupported = "grant_types_supported"
        case subjectTypesSupported = "subject_types_supported"
        case scopesSupported = "scopes_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case tokenEndpointAuthSigningAlgValuesSupported = "token_endpoint_auth_signing_alg_values_supported"
        case backchannelTokenDeliveryModesSupported = "backchannel_token_delivery_modes_supported"
        case backchannelAuthenticationRequestSigningAlgValuesSupported = "backchannel_authentication_request_signing_alg_values_supported"
        case backchannelUserCodeParameterSupported = "backchannel_user_code_parameter_supported"
        case authorizationDetailsTypesSupported = "authorization_details_types_supported"
        case claimsSupported = "claims_supported"
    }
}
