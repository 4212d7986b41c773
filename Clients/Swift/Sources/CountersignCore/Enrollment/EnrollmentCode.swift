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

/// What the enrollment QR code carries: `countersign://enroll?server=…&client_id=…&code=…`: the server to
/// register with, through which client, and the code.
///
/// Anyone can make such a link, so an app registers only with the server it was built for
/// (`isFor(server:)`): a link naming another would have the phone take that server's requests for its
/// bank's. A link whose server is not https (but for the phone's own loopback, in development) is not
/// read at all: the code would cross the network in clear.
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

    /// Reads a scanned link; nil when it is not an enrollment link, or names a server that is not https
    /// (http only on the loopback).
    public init?(uri: String) {
        guard let components = URLComponents(string: uri), components.scheme == Self.scheme, components.host == "enroll" else { return nil }
        func item(_ name: String) -> String? { components.queryItems?.first { $0.name == name }?.value }
        guard let server = item("server"), let code = item("code"), Self.isFollowable(server: server) else { return nil }
        self.init(server: server, clientID: item("client_id"), code: code)
    }

    /// Whether a phone may send an enrollment code to `server`: https, or http on its own loopback (in
    /// development). A server issuing links to any other is misconfigured.
    public static func isFollowable(server: String) -> Bool {
        guard let origin = origin(of: server) else { return false }
        return origin.scheme == "https" || ["127.0.0.1", "::1", "[::1]", "localhost"].contains(origin.host)
    }

    /// Whether the link names `server` (scheme, host, port and path; the host in any case, a default port
    /// written or not): an app registers only with links for the server it was built for.
    public func isFor(server expected: String) -> Bool {
        guard let named = Self.origin(of: server), let wanted = Self.origin(of: expected) else { return false }
        return named == wanted
    }

    /// A server URL's parts that say where requests go.
    private struct Origin: Equatable {
        let scheme: String
        let host: String
        let port: Int
        let path: String
    }

    private static func origin(of server: String) -> Origin? {
        guard let components = URLComponents(string: server), let scheme = components.scheme?.lowercased(),
            ["http", "https"].contains(scheme), let host = components.host?.lowercased(), !host.isEmpty,
            components.user == nil, components.password == nil
        else { return nil }
        let path = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        return Origin(scheme: scheme, host: host, port: components.port ?? (scheme == "https" ? 443 : 80), path: path)
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
