import Foundation

/// Base64 as clients send it: either the standard or the URL-safe alphabet, padding optional.
///
/// The alphabets are swapped byte by byte around Foundation's codec: ids, challenges and signatures go
/// through here on every request, and string replacing cost more than the coding itself.
public enum LenientBase64 {
    /// Decodes `text` (white space around it ignored), or returns nil when it is not base64 in either
    /// alphabet.
    public static func decode(_ text: String) -> Data? {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || (0x09...0x0D).contains(byte) }
        let trimmed = text.utf8.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
        var standard = [UInt8]()
        standard.reserveCapacity(trimmed.count + 3)
        for byte in trimmed {
            switch byte {
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            default: standard.append(byte)
            }
        }
        while standard.last == UInt8(ascii: "=") { standard.removeLast() }
        guard !standard.isEmpty, standard.count % 4 != 1 else { return nil }
        standard.append(contentsOf: repeatElement(UInt8(ascii: "="), count: (4 - standard.count % 4) % 4))
        return Data(base64Encoded: Data(standard))
    }

    /// base64url without padding, the form the server uses for challenges, nonces and ids.
    public static func urlEncoded<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let standard = Data(bytes).base64EncodedData()
        var url = [UInt8]()
        url.reserveCapacity(standard.count)
        for byte in standard {
            switch byte {
            case UInt8(ascii: "+"): url.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): url.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: url.append(byte)
            }
        }
        return String(decoding: url, as: UTF8.self)
    }
}
