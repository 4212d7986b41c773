import Foundation

/// What a backend client (one that asks through OpenID CIBA) registered besides its `ClientRecord`.
struct BackendClientRecord: Sendable, Equatable {
    let clientID: String
    /// JSON text: the client's public keys, a JWKS (`BackendClientRegistration` checked them).
    let jwks: String
    /// A `TokenDeliveryMode`.
    let tokenDeliveryMode: String
    /// Where ping notifications go; nil in poll mode.
    let notificationEndpoint: String?
    /// `ES256` or `PS256` when its requests must come as signed request objects; nil when parameters may
    /// come as they are.
    let requestSigningAlg: String?
    /// JSON text: the `authorization_details` types it may send.
    let authorizationDetailsTypes: String
}

extension BackendClientRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        clientID = try row["client_id"]
        jwks = try row["jwks"]
        tokenDeliveryMode = try row["token_delivery_mode"]
        notificationEndpoint = try row["notification_endpoint"]
        requestSigningAlg = try row["request_signing_alg"]
        authorizationDetailsTypes = try row["authorization_details_types"]
    }
}

/// How a backend client learns that its request was answered (CIBA Core §5): it polls the token endpoint,
/// or is pinged and then redeems. Push, which sends the tokens themselves, is not offered (FAPI-CIBA).
enum TokenDeliveryMode: String, CaseIterable {
    case poll
    case ping
}
