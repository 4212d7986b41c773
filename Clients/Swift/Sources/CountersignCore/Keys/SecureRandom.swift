import Crypto
import Foundation

/// Random values from the system CSPRNG.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// `length` characters drawn uniformly from `alphabet`.
    public static func string(length: Int, from alphabet: [Character]) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// A fresh challenge: 32 random bytes, base64url without padding.
    public static func challenge() -> String {
        LenientBase64.urlEncoded(bytes(32))
    }

    /// An unguessable identifier such as `int_…`: a prefix and 128 random bits.
    public static func identifier(prefix: String) -> String {
        prefix + "_" + LenientBase64.urlEncoded(bytes(16))
    }
}

/// Comparison of secrets that takes the same time wherever the inputs differ.
public enum ConstantTime {
    /// Whether `lhs` and `rhs` hold the same bytes.
    public static func equals<A: Collection, B: Collection>(_ lhs: A, _ rhs: B) -> Bool
    where A.Element == UInt8, B.Element == UInt8 {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }
}

/// SHA-256 of a secret, hex encoded: how bearer secrets are stored at rest.
public enum SecretDigest {
    public static func hex(_ secret: String) -> String {
        hexString(SHA256.hash(data: Data(secret.utf8)))
    }

    /// HMAC-SHA256 of `message` under `key`, hex encoded: how short secrets (web OTPs, enrollment codes)
    /// are kept, so that their hashes cannot be brute-forced without the key.
    public static func keyedHex(_ message: String, key: SymmetricKey) -> String {
        hexString(HMAC<SHA256>.authenticationCode(for: Data(message.utf8), using: key))
    }

    private static func hexString(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(2 * SHA256.byteCount)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `secret` hashes to `storedHex`, compared in constant time.
    public static func matches(_ secret: String, storedHex: String) -> Bool {
        ConstantTime.equals(Array(hex(secret).utf8), Array(storedHex.utf8))
    }
}
