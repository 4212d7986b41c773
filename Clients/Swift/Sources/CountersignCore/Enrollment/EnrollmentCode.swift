import Crypto
import Foundation

/// One-time enrollment codes: 16 characters of Crockford's base32 (80 random bits), shown in groups of
/// four (`7KQ2-M9XD-…`). Typing is forgiving: case, dashes and spaces do not matter, and O, I and L read
/// as 0, 1 and 1.
public enum EnrollmentCode {
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    static let length = 16
    /// Seconds a code stays valid unless its issuer says otherwise, and at most.
    public static let defaultLifetime = 600
    public static let longestLifetime = 86400

    /// A fresh code, grouped for display.
    public static func generate() -> String {
        let characters = Array(SecureRandom.string(length: length, from: alphabet))
        return stride(from: 0, to: length, by: 4).map { String(characters[$0..<$0 + 4]) }.joined(separator: "-")
    }

    /// The code as typed, reduced to the characters that carry it.
    public static func normalized(_ typed: String) -> String {
        String(typed.uppercased().compactMap { character -> Character? in
            switch character {
            case "-", " ": nil
            case "O": "0"
            case "I", "L": "1"
            default: character
            }
        })
    }

    /// HMAC-SHA256 of the normalized code, hex encoded: all the server keeps of it.
    public static func keyedHash(_ code: String, key: SymmetricKey) -> String {
        SecretDigest.keyedHex("enrollment\n\(normalized(code))", key: key)
    }
}

/// What the enrollment QR code carries: `countersign://enroll?server=…&client_id=…&code=…`. The phone app
/// learns from it which server to register with, through which client, and the code.
public struct EnrollmentLink: Sendable, Equatable {
    public static let scheme = "countersign"
    public let server: String
    /// The native client the code is for; nil when any of the application's may redeem it.
    public let clientID: String?
    public let code: String

    public init(server: String, clientID: String?, code: String) {
        self.server = server
        self.clientID = clientID
        self.code = code
    }

    /// Reads a scanned link; nil when it is not an enrollment link.
    public init?(uri: String) {
        guard let components = URLComponents(string: uri), components.scheme == Self.scheme, components.host == "enroll" else { return nil }
        func item(_ name: String) -> String? { components.queryItems?.first { $0.name == name }?.value }
        guard let server = item("server"), let code = item("code") else { return nil }
        self.init(server: server, clientID: item("client_id"), code: code)
    }

    public var uri: String {
        var components = URLComponents()
        components.scheme = Self.scheme
        components.host = "enroll"
        components.queryItems = [URLQueryItem(name: "server", value: server)]
            + (clientID.map { [URLQueryItem(name: "client_id", value: $0)] } ?? [])
            + [URLQueryItem(name: "code", value: code)]
        return components.string!
    }
}
