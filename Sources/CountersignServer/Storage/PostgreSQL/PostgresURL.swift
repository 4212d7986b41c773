import Foundation
import PostgresNIO

/// Where a `postgres://` URL says the database is: `postgres://user:password@host:port/database`, or on this
/// machine through PostgreSQL's Unix socket, `postgres+uds://user@localhost/path/to/.s.PGSQL.5432#database`
/// (`postgresql` and `+tcp` are read alike). TLS is `PostgresTransportSecurity`'s to decide, from the same URL.
struct PostgresURL {
    enum Endpoint {
        case tcp(host: String, port: Int)
        case socket(path: String)
    }

    let endpoint: Endpoint
    let username: String
    let password: String?
    let database: String

    init(_ text: String) throws(PostgresTransportSecurity.Refusal) {
        guard let url = URLComponents(string: text), let username = url.user, !username.isEmpty else {
            throw .init(reason: "it is not a postgres:// URL with a user name")
        }
        self.username = username
        password = url.password
        switch url.scheme?.lowercased() {
        case "postgres", "postgresql", "postgres+tcp", "postgresql+tcp":
            guard let host = url.host, !host.isEmpty else { throw .init(reason: "it names no host") }
            endpoint = .tcp(host: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: url.port ?? 5432)
            guard let name = url.path.split(separator: "/").last, url.path.count > 1 else { throw .init(reason: "it names no database") }
            database = String(name)
        case "postgres+uds", "postgresql+uds":
            guard url.host?.isEmpty ?? true || url.host == "localhost", url.port == nil, url.path.count > 1 else {
                throw .init(reason: "a postgres+uds:// URL names the socket's path after localhost, and no port")
            }
            guard let name = url.fragment, !name.isEmpty else { throw .init(reason: "it names no database after the socket's path (#database)") }
            endpoint = .socket(path: url.path)
            database = name
        default:
            throw .init(reason: "its scheme is not postgres:// or postgres+uds://")
        }
    }

    /// The settings of its connections.
    func connection(tls: PostgresConnection.Configuration.TLS) -> PostgresConnection.Configuration {
        switch endpoint {
        case .tcp(let host, let port):
            PostgresConnection.Configuration(host: host, port: port, username: username, password: password, database: database, tls: tls)
        case .socket(let path):
            PostgresConnection.Configuration(unixSocketPath: path, username: username, password: password, database: database)
        }
    }
}
