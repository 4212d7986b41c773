import HTTPTypes

/// A refusal at the OpenID endpoints, answered as OAuth 2.0 answers (RFC 6749 §5.2): `error` and
/// `error_description` only, never cached.
struct OAuthError: Error, Sendable {
    let status: HTTPResponse.Status
    /// The OAuth error code.
    let code: String
    let description: String

    static func invalidRequest(_ description: String) -> OAuthError {
        OAuthError(status: .badRequest, code: "invalid_request", description: description)
    }

    /// The client could not be authenticated; why is logged, the answer does not say.
    static let invalidClient = OAuthError(status: .unauthorized, code: "invalid_client", description: "Client authentication failed.")
}

/// The body of an `OAuthError`.
struct OAuthErrorBody: Encodable {
    let error: String
    let errorDescription: String

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }
}
