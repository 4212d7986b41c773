import CountersignCore
import Foundation
import JWTKit

/// The server's seal over an evidence bundle (docs/EVIDENCE.md): a JWS made as the signature is recorded,
/// with the evidence key (`EvidenceSealer`), whose payload holds the bundle without its seal. The phone's
/// signature covers the approval data only; the seal covers the server's records as well (user, device,
/// approval, time), so they can be checked offline with the server's evidence key, and a change made after
/// the signing, in the database or in an exported copy, shows.
public struct EvidenceSeal: JWTPayload {
    /// The `typ` header of a seal, so that it is never taken for a token (it has no audience or expiry).
    public static let type = "countersign-evidence+jwt"

    /// The server that sealed the bundle.
    public let iss: String
    /// When it was sealed, in whole seconds: as the signature was recorded.
    public let iat: Int
    /// The bundle without its seal.
    public let evidence: EvidenceBundle

    init(issuer: String, sealedAt: Date, evidence: EvidenceBundle) {
        iss = issuer
        iat = Int(sealedAt.timeIntervalSince1970)
        self.evidence = evidence.unsealed
    }

    /// A seal does not expire: it says what the server held when it was made.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}

    /// When the bundle was sealed.
    public var sealedAt: Date { Date(timeIntervalSince1970: TimeInterval(iat)) }

    /// Why a bundle's seal does not hold.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case missing
        case unreadableKeys(String)
        case notASeal
        case doesNotVerify(String)
        /// The seal verifies, but over other records than the bundle's.
        case recordsChanged

        public var description: String {
            switch self {
            case .missing: "the bundle has no seal"
            case .unreadableKeys(let reason): "the keys are not a JWKS document: \(reason)"
            case .notASeal: "the seal is not an evidence seal (its typ is not \(EvidenceSeal.type))"
            case .doesNotVerify(let reason): "the seal does not verify with the keys given: \(reason)"
            case .recordsChanged: "the bundle differs from what the server sealed: it was changed after it was sealed"
            }
        }
    }

    /// Checks `bundle`'s seal with `jwks` (the server's public keys as a JWKS document): made by one of those
    /// keys, as an evidence seal, over exactly this bundle. Returns the seal.
    public static func check(_ bundle: EvidenceBundle, keys jwks: String) async throws(Problem) -> EvidenceSeal {
        guard let seal = bundle.seal else { throw .missing }
        let keys = JWTKeyCollection()
        do {
            try await keys.add(jwksJSON: jwks)
        } catch {
            throw .unreadableKeys("\(error)")
        }
        guard header(of: seal)?.typ == type else { throw .notASeal }
        let verified: EvidenceSeal
        do {
            verified = try await keys.verify(seal, as: EvidenceSeal.self)
        } catch {
            throw .doesNotVerify("\(error)")
        }
        guard verified.evidence == bundle.unsealed else { throw .recordsChanged }
        return verified
    }

    /// The JOSE header of a compact JWS, unverified.
    private static func header(of compact: String) -> JWTHeader? {
        guard let first = compact.split(separator: ".", omittingEmptySubsequences: false).first,
            let bytes = LenientBase64.decode(String(first))
        else { return nil }
        return try? JSONDecoder().decode(JWTHeader.self, from: Data(bytes))
    }
}
