import Foundation
import NIOSSL
import PostgresNIO

/// Whether the server's connections to PostgreSQL use TLS, as the database URL's `sslmode` (or its other
/// names: `tlsmode`, `ssl`, `tls`) and `sslrootcert` say.
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
/// one (or with libpq's `sslrootcert=system`) to an authority the system trusts, and name the host as the URL writes it (an address written as
/// digits must be among the certificate's IP addresses).
///
/// Where PostgreSQL asks for a client certificate (`pg_hba.conf`'s `cert` method or `clientcert=`), the URL
/// names it and its key with libpq's `sslcert` and `sslkey`: the key file must be the server's user's alone,
/// as libpq requires.
struct PostgresTransportSecurity {
    enum Mode {
        case disabled
        case preferred
        case required
    }

    let mode: Mode
    /// The certificate authorities of `sslrootcert`'s file; nil: the system's.
    let authorities: [NIOSSLCertificate]?
    /// What the server presents when PostgreSQL asks who it is: `sslcert`'s chain and `sslkey`'s key.
    let clientCertificate: ClientCertificate?

    struct ClientCertificate {
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
    }

    /// A URL this server will not use as written.
    struct Refusal: Error, CustomStringConvertible {
        let reason: String
        var description: String { "COUNTERSIGN_DATABASE_URL is refused: \(reason)." }
    }

    /// Reads the TLS settings of a `postgres://` or `postgres+uds://` URL, and the files they name.
    init(url text: String) throws(Refusal) {
        guard let url = URLComponents(string: text) else { throw Refusal(reason: "it is not a URL") }
        let items = url.queryItems ?? []
        let throughSocket = url.scheme?.hasSuffix("+uds") == true
        let local = throughSocket || Self.isLoopback(url.host ?? "")
        // Any of the four names, the last one given, its value as written.
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
        let tlsOff = mode == .disabled
        /// A file parameter's value (the last one given), which only TLS uses.
        func parameter(_ name: String) throws(Refusal) -> String? {
            guard let value = items.last(where: { $0.name.lowercased() == name })?.value else { return nil }
            guard !tlsOff else { throw Refusal(reason: "\(name) is given, but TLS is off") }
            return value
        }
        // `system` is libpq's name for the system's authorities, which are the default here anyway.
        if let file = try parameter("sslrootcert"), file != "system" {
            authorities = try Self.certificates(in: file, parameter: "sslrootcert")
        } else {
            authorities = nil
        }
        switch (try parameter("sslcert"), try parameter("sslkey")) {
        case (nil, nil):
            clientCertificate = nil
        case (let certificateFile?, let keyFile?):
            clientCertificate = ClientCertificate(
                chain: try Self.certificates(in: certificateFile, parameter: "sslcert"), key: try Self.privateKey(in: keyFile))
            do {
                _ = try tls()
            } catch {
                throw Refusal(reason: "the key in \(keyFile) (sslkey) is not the key of the certificate in \(certificateFile) (sslcert)")
            }
        default:
            throw Refusal(reason: "sslcert and sslkey go together: give both, or neither")
        }
    }

    private static func certificates(in file: String, parameter: String) throws(Refusal) -> [NIOSSLCertificate] {
        guard let certificates = try? NIOSSLCertificate.fromPEMFile(file), !certificates.isEmpty else {
            throw Refusal(reason: "\(parameter) names \(file), which is not a readable file of PEM certificates")
        }
        return certificates
    }

    /// The PEM private key in `file`, which must be readable by its owner alone, or also by the owner's
    /// group if root owns it (libpq's rule): a key others can read is a key others can use.
    private static func privateKey(in file: String) throws(Refusal) -> NIOSSLPrivateKey {
        var status = stat()
        guard stat(file, &status) == 0 else { throw Refusal(reason: "sslkey names \(file), which cannot be read") }
        let permissions = status.st_mode & 0o777
        guard permissions & 0o077 == 0 || (status.st_uid == 0 && permissions & 0o037 == 0) else {
            throw Refusal(reason: "sslkey names \(file), which others may read (mode \(String(permissions, radix: 8))); run chmod 600 on it")
        }
        guard let key = try? NIOSSLPrivateKey(file: file, format: .pem) else {
            throw Refusal(reason: "sslkey names \(file), which is not a readable PEM private key without a passphrase")
        }
        return key
    }

    /// The TLS of PostgresNIO's connections.
    func tls() throws -> PostgresConnection.Configuration.TLS {
        guard mode != .disabled else { return .disable }
        let context = try NIOSSLContext(configuration: tlsConfiguration)
        return mode == .required ? .require(context) : .prefer(context)
    }

    private var tlsConfiguration: TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let authorities { configuration.trustRoots = .certificates(authorities) }
        if let clientCertificate {
            configuration.certificateChain = clientCertificate.chain.map { .certificate($0) }
            configuration.privateKey = .privateKey(clientCertificate.key)
        }
        return configuration
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
