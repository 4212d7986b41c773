import CountersignCore
import Foundation
import JWTKit
import Journeys

/// Signs tokens with the newest signing key and publishes the keys relying parties need.
///
/// The first start generates a key and stores it; `rotate(recordedBy:)` adds a new one, published at once
/// and signing `publishedBeforeSigning` later, when every relying party's copy of the JWKS (cached for
/// `jwksMaxAge`) holds it; the old key signs until then, and stays in the JWKS until every token it signed
/// has expired: on any instance, which may sign with it for up to one `keySetRefresh` after it retired
/// (`retiredKeyPublished`). A rotation `immediately` (a key thought compromised) signs at once, and
/// relying parties refuse its tokens until their cached JWKS is renewed.
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
    /// How long relying parties may cache the JWKS (its `Cache-Control: max-age`).
    static let jwksMaxAge = 300
    /// How long a key rotated in is published before it signs.
    static let publishedBeforeSigning = TimeInterval(jwksMaxAge) + keySetRefresh

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
        let key: SigningKeyRecord
        if let active = try await keyVault.active(at: clock.now()) {
            key = active
        } else {
            // The first key: no relying party has a key set to update yet.
            key = Self.newKey(at: clock.now(), activatesAt: Self.wholeSecond(clock.now(), .down))
            try await keyVault.insert(key)
        }
        return try await TokenIssuer(keyVault: keyVault, issuer: issuer, lifetime: lifetime, clock: clock, signingKey: key)
    }

    /// Signs `claims` with the key that signs now: the OpenID endpoints' id and access tokens.
    func sign<Claims: JWTPayload>(_ claims: Claims, type: String? = nil) async throws -> String {
        _ = try await currentKeySet()
        var header = JWTHeader()
        header.typ = type
        return try await keys.sign(claims, kid: JWKIdentifier(string: activeKeyID), header: header)
    }

    /// The claims of `token` when a published key signed it, expired or not (an `id_token_hint`).
    func verifyIssued<Claims: JWTPayload>(_ token: String, as: Claims.Type) async throws -> Claims {
        let published = try await JWTKeyCollection().add(jwksJSON: String(decoding: try await currentKeySet().body, as: UTF8.self))
        return try await published.verify(token, as: Claims.self)
    }

    /// How long the tokens it signs live.
    nonisolated var tokenLifetime: TimeInterval { lifetime }

    /// Signs a token for a completed journey.
    func issue(_ request: TokenRequest) async throws -> String {
        _ = try await currentKeySet()
        let now = Int(clock.now().timeIntervalSince1970)
        let amr = Self.ordered(request.amr)
        let claims = TokenClaims(
            iss: issuer, aud: request.clientID, sub: request.user.userID, externalUserID: request.user.externalUserID,
            iat: now, exp: now + Int(lifetime), authTime: request.authTime.map { Int($0.timeIntervalSince1970) },
            jti: SecureRandom.identifier(prefix: "tok"), amr: amr, deviceID: request.deviceID,
            journeyID: request.journeyID, approvalData: request.approvalData)
        return try await keys.sign(claims, kid: JWKIdentifier(string: activeKeyID))
    }

    /// The order `amr` values are listed in, whatever order they were proven in; `mfa` comes last.
    static let canonicalOrder = ["mobile_biometrics", "hwk", "code_otp"]

    /// `amr` as every token lists it: in `canonicalOrder`, then any other, then `mfa` when two or more
    /// methods were proven.
    static func ordered(_ amr: [String]) -> [String] {
        var ordered = canonicalOrder.filter(amr.contains) + amr.filter { !canonicalOrder.contains($0) && $0 != "mfa" }
        if ordered.count >= 2 { ordered.append("mfa") }
        return ordered
    }

    /// Publishes a new key, which signs `publishedBeforeSigning` from now, or at once `immediately`;
    /// returns it. The key is stored in one transaction with the security event that records the
    /// rotation: neither is kept without the other.
    func rotate(immediately: Bool = false, recordedBy securityEvents: SecurityEvents) async throws -> SigningKeyRecord {
        let now = clock.now()
        let key = Self.newKey(
            at: now, activatesAt: immediately ? Self.wholeSecond(now, .down) : Self.wholeSecond(now.addingTimeInterval(Self.publishedBeforeSigning), .up))
        let detail = "the token signing key was rotated\(immediately ? " immediately" : ""); the new kid is \(key.id), "
            + "signing from \(key.activatesAt.formatted(.iso8601))"
        try await securityEvents.recording(.signingKeyRotated, detail: detail) {
            [keyVault] transaction in try await keyVault.rotate(to: key, in: transaction)
        }
        encodedJWKS = nil
        return key
    }

    /// The JWKS document: the public keys of the active key and of retired keys whose tokens may still be
    /// valid, encoded for the wire.
    func publishedKeys() async throws -> Data {
        try await currentKeySet().body
    }

    /// The key set as last read, read again (switching to the key that signs now) once it is stale: at
    /// the latest when a key published ahead activates.
    private func currentKeySet() async throws -> EncodedJWKS {
        let now = clock.now()
        if let encodedJWKS, now < encodedJWKS.validUntil { return encodedJWKS }
        let records = try await keyVault.published(retiredAfter: now.addingTimeInterval(-retiredKeyPublished))
        if let signing = records.first(where: { $0.signs(at: now) }), signing.id != activeKeyID { try await sign(with: signing) }
        var jwks: [String: PublishedKey] = [:]
        for record in records { jwks[record.id] = try publicKeys[record.id] ?? Self.publicKey(record) }
        publicKeys = jwks
        let body = try JSONEncoder.wire.encode(PublishedKeySet(keys: records.compactMap { jwks[$0.id] }))
        let lastTokensExpire = records.compactMap { $0.retiredAt?.addingTimeInterval(retiredKeyPublished) }.min() ?? .distantFuture
        let nextActivation = records.map(\.activatesAt).filter { $0 > now }.min() ?? .distantFuture
        let keySet = EncodedJWKS(body: body, validUntil: min(lastTokensExpire, nextActivation, now.addingTimeInterval(Self.keySetRefresh)))
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

    /// `date` as a whole second, which every database keeps exactly: the instances compare activation
    /// and retirement times with their clocks, and a time read back a microsecond later would move them.
    private static func wholeSecond(_ date: Date, _ rounding: FloatingPointRoundingRule) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(rounding))
    }

    private static func newKey(at date: Date, activatesAt: Date) -> SigningKeyRecord {
        SigningKeyRecord(
            id: SecureRandom.identifier(prefix: "key"), privateKeyPEM: ES256PrivateKey().pemRepresentation, createdAt: date,
            activatesAt: activatesAt, retiredAt: nil)
    }

    private static func collection(signingWith model: SigningKeyRecord) async throws -> JWTKeyCollection {
        let collection = JWTKeyCollection()
        await collection.add(ecdsa: try ES256PrivateKey(pem: model.privateKeyPEM), kid: JWKIdentifier(string: model.id))
        return collection
    }
}
