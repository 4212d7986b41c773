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
/// machine (`localhost`, 127.0.0.0/8, `::1`, or the Unix socket) PostgresKit's defaults stand: TLS if
/// the database offers it over TCP, none through the socket.
struct PostgresTransportSecurity {
    enum Mode {
        case disabled
        case preferred
        case required
    }

    let mode: Mode
    /// A PEM file of the certificate authorities the database's certificate must chain to (`sslrootcert`);
    /// nil: the system's.
    let rootCertificates: String?

    /// A URL this server will not use as written.
    struct Refusal: Error, CustomStringConvertible {
        let reason: String
        var description: String { "COUNTERSIGN_DATABASE_URL is refused: \(reason)." }
    }

    /// Reads the TLS settings of a `postgres://` or `postgres+uds://` URL.
    init(url text: String) throws(Refusal) {
        guard let url = URLComponents(string: text) else { throw Refusal(reason: "it is not a URL") }
        let items = url.queryItems ?? []
        let throughSocket = url.scheme?.hasSuffix("+uds") == true
        let local = throughSocket || Self.isLoopback(url.host ?? "")
        let named = items.last { ["tlsmode", "sslmode", "ssl", "tls"].contains($0.name.lowercased()) }?.value?.lowercased()
        switch named {
        case nil:
            mode = throughSocket ? .disabled : local ? .preferred : .required
        case "require", "verify-ca", "verify-full":
            mode = .required
        case "disable", "false":
            mode = .disabled
        case let fallingBack? where ["prefer", "allow", "true"].contains(fallingBack):
            guard local else {
                throw Refusal(
                    reason: "sslmode=\(fallingBack) would go on in plain text whenever the other end says it has no TLS; "
                        + "use sslmode=require (the default for a database on another host), or sslmode=disable on a network you trust")
            }
            mode = .preferred
        case let unknown?:
            throw Refusal(reason: "sslmode=\(unknown) is none of require, verify-full, verify-ca, prefer or disable")
        }
        rootCertificates = items.last { $0.name.lowercased() == "sslrootcert" }?.value
        if let rootCertificates {
            guard mode != .disabled else { throw Refusal(reason: "sslrootcert is given, but sslmode=disable turns TLS off") }
            guard FileManager.default.isReadableFile(atPath: rootCertificates) else {
                throw Refusal(reason: "sslrootcert names \(rootCertificates), which cannot be read")
            }
        }
    }

    /// The TLS of PostgresNIO's connections: the certificate is always checked, for its chain (to
    /// `rootCertificates`, or the system's authorities) and for the host's name.
    func tls() throws -> PostgresConnection.Configuration.TLS {
        guard mode != .disabled else { return .disable }
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let rootCertificates {
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(rootCertificates))
        }
        let context = try NIOSSLContext(configuration: configuration)
        return mode == .required ? .require(context) : .prefer(context)
    }

    /// `localhost`, an address in 127.0.0.0/8, or `::1`. Judged by the URL's text, never by what a name
    /// resolves to, which whoever answers the name lookup could choose.
    private static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host == "::1" { return true }
        var address = in_addr()
        return inet_pton(AF_INET, host, &address) == 1 && UInt32(bigEndian: address.s_addr) >> 24 == 127
    }
}

/// The first connection to PostgreSQL failed for TLS. PostgresNIO's errors describe themselves only when
/// reflected, and the operator should learn at start what to change.
struct PostgresTLSFailure: Error, CustomStringConvertible {
    let description: String

    /// `error` explained, when TLS is why a connection failed; `error` itself otherwise.
    static func explaining(_ error: any Error, url: String) -> any Error {
        guard let error = error as? PSQLError else { return error }
        let server = URLComponents(string: url).map { "\($0.host ?? "?"):\($0.port ?? 5432)" } ?? "?"
        if error.code == .sslUnsupported {
            return PostgresTLSFailure(
                description: "PostgreSQL at \(server) answered that it has no TLS, which COUNTERSIGN_DATABASE_URL requires "
                    + "(sslmode=require is the default for a database on another host). Turn TLS on in PostgreSQL (ssl = on), "
                    + "or add sslmode=disable to the URL if the network between them is trusted.")
        }
        if let underlying = error.underlying, underlying is NIOSSLError || underlying is NIOSSLExtraError {
            return PostgresTLSFailure(
                description: "The TLS handshake with PostgreSQL at \(server) failed (\(underlying)). Its certificate must chain "
                    + "to an authority in the file sslrootcert names (or, without it, to one the system trusts) and name the "
                    + "URL's host.")
        }
        return error
    }
}
