import CountersignCore
import Crypto
import Foundation
import Testing
import _CryptoExtras

@Suite("Public keys and signatures")
struct VerifyingKeyTests {
    let message = "challenge-123"

    @Test("P-256 keys as SPKI DER or X9.63, signatures as DER or raw r‖s")
    func p256Encodings() throws {
        let privateKey = P256.Signing.PrivateKey()
        let signature = try privateKey.signature(for: Data(message.utf8))
        for encodedKey in [privateKey.publicKey.derRepresentation, privateKey.publicKey.x963Representation] {
            let key = try VerifyingKey(base64: encodedKey.base64EncodedString(), allowRSA: false)
            #expect(key.family == .ec)
            #expect(key.verifies(signatureBase64: signature.derRepresentation.base64EncodedString(), of: message))
            #expect(key.verifies(signatureBase64: signature.rawRepresentation.base64EncodedString(), of: message))
            #expect(key.verifies(signatureBase64: LenientBase64.urlEncoded(signature.derRepresentation), of: message))
            #expect(!key.verifies(signatureBase64: signature.derRepresentation.base64EncodedString(), of: message + "x"))
        }
    }

    @Test("a signature by another key does not verify")
    func otherKey() throws {
        let key = try VerifyingKey(base64: P256.Signing.PrivateKey().publicKey.derRepresentation.base64EncodedString(), allowRSA: false)
        let signature = try P256.Signing.PrivateKey().signature(for: Data(message.utf8))
        #expect(!key.verifies(signatureBase64: signature.derRepresentation.base64EncodedString(), of: message))
        #expect(!key.verifies(signatureBase64: "not base64!", of: message))
    }

    @Test("RSA-2048 keys verify PSS and PKCS#1 v1.5 signatures when allowed")
    func rsa() throws {
        let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let encoded = privateKey.publicKey.derRepresentation.base64EncodedString()
        let key = try VerifyingKey(base64: encoded, allowRSA: true)
        #expect(key.family == .rsa)
        for padding in [_RSA.Signing.Padding.PSS, .insecurePKCS1v1_5] {
            let signature = try privateKey.signature(for: Data(message.utf8), padding: padding)
            #expect(key.verifies(signatureBase64: signature.rawRepresentation.base64EncodedString(), of: message))
            #expect(!key.verifies(signatureBase64: signature.rawRepresentation.base64EncodedString(), of: "other"))
        }
        #expect(throws: VerifyingKey.ParseError.rsaNotAllowed) { try VerifyingKey(base64: encoded, allowRSA: false) }
    }

    @Test("RSA keys under 2048 bits are refused")
    func shortRSA() throws {
        let weak = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        #expect(throws: VerifyingKey.ParseError.unsupportedKey) {
            try VerifyingKey(base64: weak.publicKey.derRepresentation.base64EncodedString(), allowRSA: true)
        }
    }

    @Test("garbage is not a key", arguments: ["", "%%%", "AAAA", Data(repeating: 4, count: 65).base64EncodedString()])
    func garbage(text: String) {
        #expect(throws: VerifyingKey.ParseError.self) { try VerifyingKey(base64: text, allowRSA: true) }
    }

    @Test("base64 in either alphabet, padding optional")
    func lenientBase64() {
        let bytes = Data([0xfb, 0xff, 0xfe, 0x01])
        #expect(LenientBase64.decode("+//+AQ==") == bytes)
        #expect(LenientBase64.decode("-__-AQ") == bytes)
        #expect(LenientBase64.decode("-__-AQ=") == bytes)
        #expect(LenientBase64.decode(" -__-AQ\n") == bytes, "white space around it is ignored")
        #expect(LenientBase64.decode("-__ -AQ") == nil, "white space inside is not")
        #expect(LenientBase64.decode("A") == nil)
        #expect(LenientBase64.decode("") == nil)
        #expect(LenientBase64.urlEncoded(bytes) == "-__-AQ")
        #expect(LenientBase64.urlEncoded(Data(repeating: 0xff, count: 5)) == "______8")
    }

    @Test("challenges are 32 random bytes and never repeat")
    func challenges() {
        let first = SecureRandom.challenge()
        #expect(LenientBase64.decode(first)?.count == 32)
        #expect(first != SecureRandom.challenge())
    }

    @Test("secrets compare in constant time and by value")
    func secretDigest() {
        let stored = SecretDigest.hex("itk_secret")
        #expect(SecretDigest.matches("itk_secret", storedHex: stored))
        #expect(!SecretDigest.matches("itk_secreT", storedHex: stored))
        #expect(!ConstantTime.equals([1, 2], [1, 2, 3]))
    }
}
