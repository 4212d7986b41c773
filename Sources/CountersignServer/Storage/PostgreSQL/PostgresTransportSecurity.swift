import Foundation
import NIOSSL
import PostgresNIO

/// Whether the server's connections to PostgreSQL use TLS, as the database URL's `sslmode` (or PostgresKit's
/// other names for it: `tlsmode`, `ssl`, `tls`) and `sslrootcert` say.
///
/// A database on another host is reached over TLS, its certificate checked for its chain and its name,
/// unless the URL says `sslmode=disable`. `sslmode=prefer` is refused there: it goes on in plain text
/// whenever the other end answers that it has no TLS, which anyone on the way can answer; the password
/// and every row the server reads and writes would then cross the network readable. On the server's own
/// machine (the host written as `localhost`, an address in 127.0.0.0/8 or `::1`) TLS is used when the
/// database offers it, and through the Unix socket, where PostgreSQL offers none, not at all.
///
/// Whenever TLS is used the certificate is checked in full, whatever the mode's name (`require` and
/// `verify-ca` too, unlike libpq's): it must chain to an authority in `sslrootcert`'s file, or without
/// one to an authority the system trusts, and name the host as the URL writes it (an address written as
/// digits must be among the certificate's IP addresses).
struct PostgresTransportSecurity {
    enum Mode {
        case disabled
        case preferred
        case required
    }

    let mode: Mode
    /// The certificate authorities of `sslrootcert`'s file; nil: the system's.
    let authorities: [NIOSSLCertificate]?

    /// A URL this server will not use as written.
    struct Refusal: Error, CustomStringConvertible {
        let reason: String
        var description: String { "COUNTERSIGN_DATABASE_URL is refused: \(reason)." }
    }

    /// Reads the TLS settings of a `postgres://` or `postgres+uds://` URL, and the authorities' file.
    init(url text: String) throws(Refusal) {
        guard let url = URLComponents(string: text) else { throw Refusal(reason: "it is not a URL") }
        let items = url.queryItems ?? []
        let throughSocket = url.scheme?.hasSuffix("+uds") == true
        let local = throughSocket || Self.isLoopback(url.host ?? "")
        // Read as PostgresKit reads them: any of the four names, the last one given, its value as written.
        let setting = items.last { ["tlsmode", "sslmode", "ssl", "tls"].contains($0.name.lowercased()) }
        let name = setting?.name ?? "sslmode"
        switch setting?.value {
        case nil:
            mode = throughSocket ? .disabled : local ? .preferred : .required
        case "require", "verify-ca", "verify-full":
            guard !throughSocket else {
                throw Refusal(reason: "PostgreSQL offers no TLS through its Unix socket; leave \(name) out of a postgres+uds URL")
            }
            mode = .required
        case "disable", "false":
            mode = .disabled
        case let fallingBack? where ["prefer", "allow", "true"].contains(fallingBack):
            guard local else {
                throw Refusal(
                    reason: "\(name)=\(fallingBack) would go on in plain text whenever the other end says it has no TLS; "
                        + "use sslmode=require (the default for a database on another host), or sslmode=disable on a network you trust")
            }
            mode = .preferred
        case let other?:
            throw Refusal(reason: "\(name)=\(other) is none of require, verify-full, verify-ca, prefer, allow, true, disable or false")
        }
        guard let file = items.last(where: { $0.name.lowercased() == "sslrootcert" })?.value else {
            authorities = nil
            return
        }
        guard mode != .disabled else { throw Refusal(reason: "sslrootcert is given, but TLS is off") }
        let certificates = try? NIOSSLCertificate.fromPEMFile(file)
        guard let certificates, !certificates.isEmpty else {
            throw Refusal(reason: "sslrootcert names \(file), which is not a readable file of PEM certificates")
        }
        authorities = certificates
    }

    /// The TLS of PostgresNIO's connections.
    func tls() throws -> PostgresConnection.Configuration.TLS {
        guard mode != .disabled else { return .disable }
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let authorities { configuration.trustRoots = .certificates(authorities) }
        let context = try NIOSSLContext(configuration: configuration)
        return mode == .required ? .require(context) : .prefer(context)
    }

    /// The host written as `localhost`, an address in 127.0.0.0/8, or `::1`. Judged by the URL's text,
    /// never by what a name resolves to, which whoever answers the name lookup could choose. Any other
    /// spelling of a loopback address (`127.1`, `::ffff:127.0.0.1`) counts as another host: TLS is required.
    private static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host == "::1" { return true }
        var address = in_addr()
        return inet_pton(AF_INET, host, &address) == 1 && UInt32(bigEndian: address.s_addr) >> 24 == 127
    }
}
