import Crypto
import Foundation
import _CryptoExtras

/// A public key that checks signatures made by a phone: the device key or a biometric key.
///
/// P-256 keys arrive as base64 SPKI DER or as an X9.63 uncompressed point; RSA keys (2048 bits or more,
/// biometric keys on Android keystores) as base64 SPKI or PKCS#1 DER.
public enum VerifyingKey: Sendable {
    case p256(P256.Signing.PublicKey)
    case rsa(_RSA.Signing.PublicKey)

    /// The algorithm families a caller may accept.
    public enum Family: String, Sendable, Codable {
        case ec
        case rsa
    }

    /// Why a key could not be used.
    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case notBase64
        case unsupportedKey
        case rsaNotAllowed

        public var description: String {
            switch self {
            case .notBase64: "the public key is not base64"
            case .unsupportedKey: "the public key is neither a P-256 key (SPKI DER or X9.63) nor an RSA key of 2048 bits or more"
            case .rsaNotAllowed: "only P-256 keys are accepted here"
            }
        }
    }

    /// Parses a base64 public key, accepting RSA only when `allowRSA` is set.
    public init(base64: String, allowRSA: Bool) throws(ParseError) {
        guard let der = LenientBase64.decode(base64) else { throw .notBase64 }
        if let key = try? P256.Signing.PublicKey(derRepresentation: der) {
            self = .p256(key)
        } else if der.first == 0x04, let key = try? P256.Signing.PublicKey(x963Representation: der) {
            self = .p256(key)
        } else if let key = try? _RSA.Signing.PublicKey(derRepresentation: der) {
            guard allowRSA else { throw .rsaNotAllowed }
            self = .rsa(key)
        } else {
            throw .unsupportedKey
        }
    }

    /// Which family the key belongs to.
    public var family: Family {
        switch self {
        case .p256: .ec
        case .rsa: .rsa
        }
    }

    /// The key as base64 SPKI DER, the form it is stored in.
    public var spkiBase64: String {
        switch self {
        case .p256(let key): key.derRepresentation.base64EncodedString()
        case .rsa(let key): key.derRepresentation.base64EncodedString()
        }
    }

    /// Whether `signatureBase64` is a valid SHA-256 signature of `message`'s UTF-8 bytes.
    ///
    /// ECDSA signatures may be DER or raw r‖s; RSA signatures may use PSS or PKCS#1 v1.5 padding.
    public func verifies(signatureBase64: String, of message: String) -> Bool {
        verifiedSignature(signatureBase64: signatureBase64, of: message) != nil
    }

    /// The signature, once it verifies as a SHA-256 signature of `message`'s UTF-8 bytes; nil when it
    /// does not.
    public func verifiedSignature(signatureBase64: String, of message: String) -> VerifiedSignature? {
        guard let signature = LenientBase64.decode(signatureBase64) else { return nil }
        let bytes = Data(message.utf8)
        switch self {
        case .p256(let key):
            let forms = [
                try? P256.Signing.ECDSASignature(derRepresentation: signature),
                signature.count == 64 ? try? P256.Signing.ECDSASignature(rawRepresentation: signature) : nil,
            ]
            return forms.lazy.compactMap { $0 }.first { key.isValidSignature($0, for: bytes) }.map(VerifiedSignature.ecdsa)
        case .rsa(let key):
            let rsaSignature = _RSA.Signing.RSASignature(rawRepresentation: signature)
            guard key.isValidSignature(rsaSignature, for: bytes, padding: .PSS)
                || key.isValidSignature(rsaSignature, for: bytes, padding: .insecurePKCS1v1_5)
            else { return nil }
            return .rsa(signature)
        }
    }
}

/// A signature that verified, however the phone wrote it.
public enum VerifiedSignature: Sendable {
    case ecdsa(P256.Signing.ECDSASignature)
    case rsa(Data)

    /// What makes it this signature however it is written, to refuse replays: ECDSA's `r` (base64
    /// alphabets, DER or raw r‖s, and the negated `s` all keep it, while a new signature has a new random
    /// nonce and so a new `r`); an RSA signature's bytes.
    public var identity: Data {
        switch self {
        case .ecdsa(let signature): signature.rawRepresentation.prefix(32)
        case .rsa(let bytes): bytes
        }
    }

    /// The one form evidence keeps, standard padded base64: ECDSA as DER, also when the phone sent raw
    /// r‖s (openssl reads only DER); RSA as its bytes.
    public var canonicalBase64: String {
        switch self {
        case .ecdsa(let signature): signature.derRepresentation.base64EncodedString()
        case .rsa(let bytes): bytes.base64EncodedString()
        }
    }
}
