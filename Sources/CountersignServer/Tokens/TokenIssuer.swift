import CountersignCore
import Fluent
import Foundation
import JWTKit
import Journeys

/// Signs tokens with the newest signing key and publishes the keys relying parties need.
///
/// The first start generates a key and stores it; `rotate()` adds a new one and retires the old, which
/// stays in the JWKS until every token it signed has expired.
///
/// Every relying party fetches the JWKS, so it is served from memory: the published keys are parsed once
/// and the document is encoded again only when the set changes (a rotation, or a retired key's tokens
/// having all expired).
actor TokenIssuer {
    private let storage: Storage
    private let issuer: String
    private let lifetime: TimeInterval
    private let clock: any WallClock
    private var activeKeyID: String
    private var keys: JWTKeyCollection
    /// The public halves of the keys that may still verify a token, newest first.
    private var publicKeys: [PublicKey]
    private var encodedJWKS: EncodedJWKS?

    /// A signing key as the JWKS publishes it.
    private struct PublicKey {
        let jwk: JWK
        let retiredAt: Date?
    }

    /// The JWKS as sent, and until when it stays right.
    private struct EncodedJWKS {
        let body: Data
        let validUntil: Date
    }

    private init(
        storage: Storage, issuer: String, lifetime: TimeInterval, clock: any WallClock, activeKeyID: String,
        keys: JWTKeyCollection, publicKeys: [PublicKey]
    ) {
        self.storage = storage
        self.issuer = issuer
        self.lifetime = lifetime
        self.clock = clock
        self.activeKeyID = activeKeyID
        self.keys = keys
        self.publicKeys = publicKeys
    }

    /// Loads the active key, creating the first one when the store has none.
    static func bootstrap(storage: Storage, issuer: String, lifetime: TimeInterval, clock: any WallClock) async throws -> TokenIssuer {
        let store = storage.signingKeys
        let key: SigningKeyRecord
        if let active = try await store.active() {
            key = active
        } else {
            key = Self.newKey(at: clock.now())
            try await store.insert(key)
        }
        let published = try await store.published(retiredAfter: clock.now().addingTimeInterval(-lifetime))
        return TokenIssuer(
            storage: storage, issuer: issuer, lifetime: lifetime, clock: clock, activeKeyID: key.id,
            keys: try await collection(signingWith: key), publicKeys: try published.map(publicKey))
    }

    /// Signs a token for a completed journey.
    func issue(_ request: TokenRequest) async throws -> String {
        let now = Int(clock.now().timeIntervalSince1970)
        var amr = Self.canonicalOrder.filter(request.amr.contains) + request.amr.filter { !Self.canonicalOrder.contains($0) && $0 != "mfa" }
        if amr.count >= 2 { amr.append("mfa") }
        let claims = TokenClaims(
            iss: issuer, aud: request.clientID, sub: request.user.userID, externalUserID: request.user.externalUserID,
            iat: now, exp: now + Int(lifetime), authTime: request.authTime.map { Int($0.timeIntervalSince1970) },
            jti: SecureRandom.identifier(prefix: "tok"), amr: amr, deviceID: request.deviceID,
            journeyID: request.journeyID, approvalData: request.approvalData)
        return try await keys.sign(claims, kid: JWKIdentifier(string: activeKeyID))
    }

    /// The order `amr` values are listed in, whatever order they were proven in; `mfa` comes last.
    static let canonicalOrder = ["mobile_biometrics", "hwk", "code_otp"]

    /// Starts signing with a new key; returns its `kid`.
    func rotate() async throws -> String {
        let now = clock.now()
        let key = Self.newKey(at: now)
        try await storage.transaction { storage in
            let store = storage.signingKeys
            try await store.retireAll(at: now)
            try await store.insert(key)
        }
        keys = try await Self.collection(signingWith: key)
        activeKeyID = key.id
        publicKeys = try [Self.publicKey(key)] + publicKeys.map { PublicKey(jwk: $0.jwk, retiredAt: $0.retiredAt ?? now) }
        encodedJWKS = nil
        return activeKeyID
    }

    /// The JWKS document: the public keys of the active key and of retired keys whose tokens may still be
    /// valid, encoded for the wire.
    func publishedKeys() throws -> Data {
        let now = clock.now()
        if let encodedJWKS, now < encodedJWKS.validUntil { return encodedJWKS.body }
        publicKeys.removeAll { key in key.retiredAt.map { $0.addingTimeInterval(lifetime) <= now } ?? false }
        let body = try JSONEncoder.wire.encode(JWKS(keys: publicKeys.map(\.jwk)))
        let nextExpiry = publicKeys.compactMap { $0.retiredAt?.addingTimeInterval(lifetime) }.min() ?? .distantFuture
        encodedJWKS = EncodedJWKS(body: body, validUntil: nextExpiry)
        return body
    }

    private static func publicKey(_ model: SigningKeyRecord) throws -> PublicKey {
        let parameters = try ES256PrivateKey(pem: model.privateKeyPEM).publicKey.parameters
        return PublicKey(
            jwk: JWK.ecdsa(.es256, identifier: JWKIdentifier(string: model.id), x: parameters?.x, y: parameters?.y, curve: .p256),
            retiredAt: model.retiredAt)
    }

    private static func newKey(at date: Date) -> SigningKeyRecord {
        SigningKeyRecord(
            id: SecureRandom.identifier(prefix: "key"), privateKeyPEM: ES256PrivateKey().pemRepresentation, createdAt: date, retiredAt: nil)
    }

    private static func collection(signingWith model: SigningKeyRecord) async throws -> JWTKeyCollection {
        let collection = JWTKeyCollection()
        await collection.add(ecdsa: try ES256PrivateKey(pem: model.privateKeyPEM), kid: JWKIdentifier(string: model.id))
        return collection
    }
}
