import Crypto
import Foundation

/// Random values from the system CSPRNG.
public enum SecureRandom {
    /// `count` random bytes, taken eight at a time: on Linux every draw from the system generator is a
    /// system call (`getrandom`).
    public static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    /// `length` characters drawn uniformly from `alphabet` (1 to 256 of them). A random byte below the
    /// largest multiple of the alphabet's size picks character `byte % size`; a byte at or above it is
    /// drawn again, so no character is likelier than another.
    public static func string(length: Int, from alphabet: [Character]) -> String {
        precondition((1...256).contains(alphabet.count), "an alphabet of 1 to 256 characters")
        let accepted = 256 - 256 % alphabet.count
        var characters: [Character] = []
        characters.reserveCapacity(length)
        while characters.count < length {
            for byte in bytes(length - characters.count) where Int(byte) < accepted {
                characters.append(alphabet[Int(byte) % alphabet.count])
            }
        }
        return String(characters)
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

    static func hexString(_ bytes: some Sequence<UInt8>) -> String {
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
