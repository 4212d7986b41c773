import Foundation

/// Base64 as clients send it: either the standard or the URL-safe alphabet, padding optional.
public enum LenientBase64 {
    /// Decodes `text`, or returns nil when it is not base64 in either alphabet.
    public static func decode(_ text: String) -> Data? {
        var normalized = text.trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        while normalized.hasSuffix("=") { normalized.removeLast() }
        guard !normalized.isEmpty, normalized.count % 4 != 1 else { return nil }
        normalized += String(repeating: "=", count: (4 - normalized.count % 4) % 4)
        return Data(base64Encoded: normalized)
    }

    /// base64url without padding, the form the server uses for challenges, nonces and ids.
    public static func urlEncoded<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
