import JWTKit

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

extension PublishedKey {
    /// The published form of `key`'s public key, under `kid`.
    init(_ key: ES256PrivateKey, kid: String) throws {
        guard let point = key.publicKey.parameters else { throw KeyWithoutPoint(kid: kid) }
        self.init(x: point.x, y: point.y, kid: kid)
    }

    /// A key whose public point cannot be read (never expected of a P-256 key).
    struct KeyWithoutPoint: Error, CustomStringConvertible {
        let kid: String
        var description: String { "The public point of key \(kid) cannot be read." }
    }
}
