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

    /// `description` in the characters RFC 6749 §5.2 allows there: printable ASCII but `"` and `\`. What a
    /// client sent may be quoted in it; anything else becomes `?`.
    init(_ refusal: OAuthError) {
        error = refusal.code
        errorDescription = String(String.UnicodeScalarView(refusal.description.unicodeScalars.map { scalar in
            (0x20...0x7E).contains(scalar.value) && scalar != "\"" && scalar != "\\" ? scalar : "?"
        }))
    }

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }
}
