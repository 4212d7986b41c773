import Crypto
import Foundation

/// A signed transaction as one self-contained JSON document (F31): everything needed to check,
/// without the server, that the holder of the public key signed exactly this approval data.
///
/// Checking it means recomputing the challenge from `approval_data` and `nonce`
/// (`TransactionChallenge`) and verifying `signature` over the challenge's UTF-8 bytes with
/// `public_key`. docs/EVIDENCE.md shows the same with openssl.
public struct EvidenceBundle: Codable, Sendable, Equatable {
    /// The value of `format` this version writes and reads.
    public static let currentFormat = "countersign-evidence-v1"

    public let format: String
    public let id: String
    public let approvalData: ApprovalData
    /// 32 random bytes, base64url without padding.
    public let nonce: String
    /// base64url(SHA-256("countersign-txn-v1" ‖ canonical approval data ‖ nonce bytes)).
    public let challenge: String
    /// Standard base64 (padded) signature of the challenge's UTF-8 bytes: ECDSA P-256 with SHA-256
    /// (DER, as phones send it), or RSA with SHA-256 (PSS or PKCS#1 v1.5).
    public let signature: String
    public let publicKeyID: String
    /// Base64 DER SubjectPublicKeyInfo.
    public let publicKey: String
    public let userID: String
    public let externalUserID: String
    public let deviceID: String?
    public let journeyID: String
    /// The web-to-mobile approval the signature settled, when there was one.
    public let approvalID: String?
    /// ISO 8601, UTC.
    public let signedAt: String
    /// For a backend client's request (OpenID CIBA): `{"authorization_details": […], "binding_message": "…"}`
    /// as signed, the challenge following from it (`AuthorizationRequestChallenge`) and `approval_data`
    /// being empty. Absent otherwise.
    public let authorizationRequest: JSONValue?
    /// The server's seal: a JWS (ES256, by its evidence key, never a token key) whose payload holds this
    /// bundle without its seal, made as the server recorded the signature. Unlike the phone's signature it
    /// covers the server's records too (user, device, approval, time). Nil before sealing.
    public var seal: String?

    public init(
        id: String, approvalData: ApprovalData, nonce: String, challenge: String, signature: String, publicKeyID: String,
        publicKey: String, userID: String, externalUserID: String, deviceID: String?, journeyID: String,
        approvalID: String?, signedAt: String, authorizationRequest: JSONValue? = nil
    ) {
        self.format = Self.currentFormat
        self.id = id
        self.approvalData = approvalData
        self.nonce = nonce
        self.challenge = challenge
        self.signature = signature
        self.publicKeyID = publicKeyID
        self.publicKey = publicKey
        self.userID = userID
        self.externalUserID = externalUserID
        self.deviceID = deviceID
        self.journeyID = journeyID
        self.approvalID = approvalID
        self.signedAt = signedAt
        self.authorizationRequest = authorizationRequest
    }

    enum CodingKeys: String, CodingKey {
        case format, id, nonce, challenge, signature
        case approvalData = "approval_data"
        case publicKeyID = "public_key_id"
        case publicKey = "public_key"
        case userID = "user_id"
        case externalUserID = "external_user_id"
        case deviceID = "device_id"
        case journeyID = "journey_id"
        case approvalID = "approval_id"
        case signedAt = "signed_at"
        case authorizationRequest = "authorization_request"
        case seal
    }

    /// The key that signed, named by what the signature proves: `sha256:` and the SHA-256 (hex) of its DER
    /// SubjectPublicKeyInfo, as `base64 -d | sha256sum` gives it from `public_key`. `public_key_id` is
    /// only the server's name for it, which the signature does not cover. Nil when `public_key` is not base64.
    public var publicKeyFingerprint: String? {
        Data(base64Encoded: publicKey).map { "sha256:" + SecretDigest.hexString(SHA256.hash(data: $0)) }
    }

    /// The bundle as its seal covers it: every field but `seal`.
    public var unsealed: EvidenceBundle {
        var bundle = self
        bundle.seal = nil
        return bundle
    }

    /// Why a bundle does not verify.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case unknownFormat(String)
        /// A field is not in its one canonical encoding, so two texts could stand for the same bytes.
        case notCanonical(field: String)
        case challengeMismatch
        case unusablePublicKey(String)
        case badSignature

        public var description: String {
            switch self {
            case .unknownFormat(let format): "unknown format '\(format)' (expected \(EvidenceBundle.currentFormat))"
            case .notCanonical(let field): "\(field) is not in its canonical encoding"
            case .challengeMismatch: "the challenge does not match what was signed (approval_data or authorization_request) and nonce"
            case .unusablePublicKey(let reason): "public_key: \(reason)"
            case .badSignature: "the signature does not verify with public_key"
            }
        }
    }

    /// Checks the bundle offline: the challenge follows from the approval data and nonce, and the
    /// signature over it verifies with the public key.
    public func verify() throws(Problem) {
        guard format == Self.currentFormat else { throw .unknownFormat(format) }
        guard let nonceBytes = TransactionChallenge.nonceBytes(of: nonce) else { throw .notCanonical(field: "nonce") }
        for (field, text) in [("signature", signature), ("public_key", publicKey)]
        where Data(base64Encoded: text)?.base64EncodedString() != text {
            throw .notCanonical(field: field)
        }
        let expected = if let authorizationRequest {
            AuthorizationRequestChallenge.derive(signedObject: authorizationRequest, nonce: nonceBytes)
        } else {
            TransactionChallenge.derive(approvalData: approvalData, nonce: nonceBytes)
        }
        guard ConstantTime.equals(Array(expected.utf8), Array(challenge.utf8)) else { throw .challengeMismatch }
        let key: VerifyingKey
        do {
            key = try VerifyingKey(base64: publicKey, allowRSA: true)
        } catch {
            throw .unusablePublicKey(error.description)
        }
        // The key's parser tolerates some header bytes; the bundle's text must be the key's own encoding.
        guard key.spkiBase64 == publicKey else { throw .notCanonical(field: "public_key") }
        guard key.verifies(signatureBase64: signature, of: challenge) else { throw .badSignature }
    }
}
