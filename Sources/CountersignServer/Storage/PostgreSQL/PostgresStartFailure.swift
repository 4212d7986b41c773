import Foundation
import NIOSSL
import PostgresNIO

/// Why the server could not start on PostgreSQL, told so that the operator knows what to change.
///
/// PostgresNIO's errors describe themselves as "PSQLError – Generic description" unless reflected, and a
/// reflection may quote a statement. This tells the cause and no more: the connection's own failure, or
/// PostgreSQL's message and SQLSTATE (never its detail, which may quote a row).
struct PostgresStartFailure: Error, CustomStringConvertible {
    let description: String

    /// `error` told for the operator when PostgresNIO raised it; any other error as it is.
    static func explaining(_ error: any Error, url: String) -> any Error {
        guard let error = error as? PSQLError else { return error }
        let server = URLComponents(string: url).map { $0.scheme?.hasSuffix("+uds") == true ? $0.path : "\($0.host ?? "?"):\($0.port ?? 5432)" } ?? "?"
        switch error.code {
        case .sslUnsupported:
            return PostgresStartFailure(
                description: "PostgreSQL at \(server) answered that it has no TLS, which COUNTERSIGN_DATABASE_URL requires "
                    + "(sslmode=require is the default for a database on another host). Turn TLS on in PostgreSQL (ssl = on), "
                    + "or add sslmode=disable to the URL if the network between them is trusted.")
        case .connectionError:
            if let underlying = error.underlying, underlying is NIOSSLError || underlying is NIOSSLExtraError || underlying is BoringSSLError {
                let presentsCertificate = URLComponents(string: url)?.queryItems?.contains { $0.name.lowercased() == "sslcert" } == true
                return PostgresStartFailure(
                    description: "The TLS handshake with PostgreSQL at \(server) failed (\(underlying)). Its certificate must "
                        + "chain to an authority in the file sslrootcert names (or, without it, to one the system trusts) and "
                        + "name the URL's host (an address written as digits among its IP addresses)."
                        + (presentsCertificate
                            ? " PostgreSQL in turn must trust the authority of the client certificate sslcert names (its ssl_ca_file)." : ""))
            }
            return PostgresStartFailure(
                description: "PostgreSQL at \(server) cannot be reached (\(error.underlying.map { "\($0)" } ?? "no reason given")).")
        case .server:
            let message = error.serverInfo?[.message] ?? "no message"
            let state = error.serverInfo?[.sqlState] ?? "?"
            return PostgresStartFailure(description: "PostgreSQL at \(server) refused the server: \(message) (SQLSTATE \(state)).")
        default:
            return PostgresStartFailure(description: "Starting on PostgreSQL at \(server) failed: \(error.code).")
        }
    }
}
