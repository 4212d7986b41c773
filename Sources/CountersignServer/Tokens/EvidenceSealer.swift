import CountersignCore
import Crypto
import Foundation
import JWTKit

/// Seals evidence bundles as their signatures are recorded (`EvidenceSeal`), with a key of its own, derived
/// from the master key. Never a token signing key: a seal has no audience and no expiry, and must not pass for a
/// token with a relying party that checks little more than the signature. Every instance sharing the master
/// key seals with the same key, and the key is stored nowhere.
struct EvidenceSealer: Sendable {
    private let keys: JWTKeyCollection
    private let kid: String
    private let issuer: String
    private let clock: any WallClock
    /// The public key that checks the seals, as a JWKS document.
    let publicKeys: Data

    /// What the key is derived for; another purpose gets another key.
    static let keyPurpose = "countersign evidence seal v1"

    init(secrets: SecretBox, issuer: String, clock: any WallClock) async throws {
        let derived = secrets.derivedSigningKey(for: Self.keyPurpose)
        // Named by its public key, so that the name changes with the key (a new master key).
        kid = "seal_" + LenientBase64.urlEncoded(SHA256.hash(data: derived.publicKey.derRepresentation).prefix(12))
        let key = try ES256PrivateKey(backing: derived)
        keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: kid))
        publicKeys = try JSONEncoder.wire.encode(PublishedKeySet(keys: [try PublishedKey(key, kid: kid)]))
        self.issuer = issuer
        self.clock = clock
    }

    /// The seal of `bundle`, made now.
    func seal(_ bundle: EvidenceBundle) async throws -> String {
        var header = JWTHeader()
        header.typ = EvidenceSeal.type
        return try await keys.sign(
            EvidenceSeal(issuer: issuer, sealedAt: clock.now(), evidence: bundle), kid: JWKIdentifier(string: kid), header: header)
    }
}
