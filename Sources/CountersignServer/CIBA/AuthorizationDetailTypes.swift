/// The `authorization_details` types (RFC 9396) a backend client may be allowed to send.
enum AuthorizationDetailTypes {
    /// The types the server knows without an operator's schema.
    static let builtIn: Set<String> = ["payment_initiation"]
}
