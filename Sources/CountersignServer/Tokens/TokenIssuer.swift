import CountersignCore
import FluentKit
import Foundation
import JWTKit
import Journeys

/// Signs tokens with the newest signing key and publishes the keys relying parties need.
///
/// The first start generates a key and stores it; `rotate(recordedBy:)` adds a new one and retires the old, which
/// stays in the JWKS until every token it signed has expired: on any instance, which may sign with it for
/// up to one `keySetRefresh` after another instance retired it (`retiredKeyPublished`).
///
/// Every relying party fetches the JWKS, so it is served from memory, encoded once. The key set is read
/// again from the database at most every `keySetRefresh` (or sooner, when a retired key's last tokens
/// expire): a key another instance rotated in is then published, and signs, here too.
actor TokenIssuer {
    private let keyVault: SigningKeyVault
    private let issuer: String
    private let lifetime: TimeInterval
    private let clock: any WallClock
    private var activeKeyID: String
    private var keys: JWTKeyCollection
    /// Public keys already parsed, by `kid`: a key's PEM is parsed once.
    private var publicKeys: [String: PublishedKey] = [:]
    private var encodedJWKS: EncodedJWKS?

    /// How long the key set read from the database is trusted.
    static let keySetRefresh: TimeInterval = 30

    /// How long a retired key stays published: the lifetime of a token signed with it at the last moment
    /// an instance may still sign with it, one key set refresh after its retirement.
    private var retiredKeyPublished: TimeInterval { lifetime + Self.keySetRefresh }

    /// The JWKS as sent, and until when it stays right.
    private struct EncodedJWKS {
        let body: Data
        let validUntil: Date
    }

    private init(keyVault: SigningKeyVault, issuer: String, lifetime: TimeInterval, clock: any WallClock, signingKey: SigningKeyRecord) async throws {
        self.keyVault = keyVault
        self.issuer = issuer
        self.lifetime = lifetime
        self.clock = clock
        activeKeyID = signingKey.id
        keys = try await Self.collection(signingWith: signingKey)
    }

    /// Loads the active key, creating the first one when the store has none.
    static func bootstrap(keyVault: SigningKeyVault, issuer: String, lifetime: TimeInterval, clock: any WallClock) async throws -> TokenIssuer {
        try await keyVault.sealKeysStoredInClear()
        let key: SigningKeyRecord
        if let active = try await keyVault.active() {
            key = active
        } else {
            key = Self.newKey(at: clock.now())
            try await keyVault.insert(key)
        }
        return try await TokenIssuer(keyVault: keyVault, issuer: issuer, lifetime: lifetime, clock: clock, signingKey: key)
    }

    /// Signs a token for a completed journey.
    func issue(_ request: TokenRequest) async throws -> String {
        _ = try await currentKeySet()
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

    /// Starts signing with a new key; returns its `kid`. The key is stored in one transaction with the
    /// security event that records the rotation: neither is kept without the other.
    func rotate(recordedBy securityEvents: SecurityEvents) async throws -> String {
        let now = clock.now()
        let key = Self.newKey(at: now)
        try await securityEvents.recording(.signingKeyRotated, detail: "the token signing key was rotated; the new kid is \(key.id)") {
            [keyVault] transaction in try await keyVault.rotate(to: key, at: now, in: transaction)
        }
        try await sign(with: key)
        encodedJWKS = nil
        return activeKeyID
    }

    /// The JWKS document: the public keys of the active key and of retired keys whose tokens may still be
    /// valid, encoded for the wire.
    func publishedKeys() async throws -> Data {
        try await currentKeySet().body
    }

    /// The key set as last read, read again (switching to a newer signing key) once it is stale.
    private func currentKeySet() async throws -> EncodedJWKS {
        let now = clock.now()
        if let encodedJWKS, now < encodedJWKS.validUntil { return encodedJWKS }
        let records = try await keyVault.published(retiredAfter: now.addingTimeInterval(-retiredKeyPublished))
        if let newest = records.first(where: { $0.retiredAt == nil }), newest.id != activeKeyID { try await sign(with: newest) }
        var jwks: [String: PublishedKey] = [:]
        for record in records { jwks[record.id] = try publicKeys[record.id] ?? Self.publicKey(record) }
        publicKeys = jwks
        let body = try JSONEncoder.wire.encode(PublishedKeySet(keys: records.compactMap { jwks[$0.id] }))
        let lastTokensExpire = records.compactMap { $0.retiredAt?.addingTimeInterval(retiredKeyPublished) }.min() ?? .distantFuture
        let keySet = EncodedJWKS(body: body, validUntil: min(lastTokensExpire, now.addingTimeInterval(Self.keySetRefresh)))
        encodedJWKS = keySet
        return keySet
    }

    private func sign(with key: SigningKeyRecord) async throws {
        keys = try await Self.collection(signingWith: key)
        activeKeyID = key.id
    }

    private static func publicKey(_ model: SigningKeyRecord) throws -> PublishedKey {
        try PublishedKey(try ES256PrivateKey(pem: model.privateKeyPEM), kid: model.id)
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
