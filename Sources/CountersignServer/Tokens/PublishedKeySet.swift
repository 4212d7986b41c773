/// The JWKS document (RFC 7517): each key with `use` and `alg`, which OpenID libraries look for when they
/// pick a verification key from a set they found through discovery.
struct PublishedKeySet: Encodable {
    let keys: [PublishedKey]
}

/// One verification key (of tokens, or of evidence seals): a P-256 public key for ES256 signatures.
struct PublishedKey: Encodable {
    let kty = "EC"
    let crv = "P-256"
    /// The point's coordinates, base64url without padding.
    let x: String
    let y: String
    let kid: String
    let use = "sig"
    let alg = "ES256"
}
