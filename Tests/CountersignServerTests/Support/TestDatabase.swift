import CountersignServer
import Foundation
import Logging
import PostgresNIO
import Testing

/// The database a test runs on: in-memory SQLite by default, or a fresh PostgreSQL database of its
/// own when `COUNTERSIGN_TEST_DATABASE_URL` names a server (the test script sets it for the second run).
struct TestDatabase {
    let location: DatabaseLocation
    private let dropStatement: (() async throws -> Void)?

    static var postgresURL: String? {
        ProcessInfo.processInfo.environment["COUNTERSIGN_TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The Unix socket of the PostgreSQL server of `postgresURL` (`COUNTERSIGN_TEST_PG_SOCKET`), when the test script names it.
    static var postgresSocket: String? {
        ProcessInfo.processInfo.environment["COUNTERSIGN_TEST_PG_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The certificate of the authority that issued the certificate of `postgresURL`'s server for `localhost`
    /// (`COUNTERSIGN_TEST_PG_CA`), when the test script names it.
    static var postgresAuthority: String? {
        ProcessInfo.processInfo.environment["COUNTERSIGN_TEST_PG_CA"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A client certificate from that authority and its key (file paths), for the role `countersign_certified`,
    /// which the cluster signs in by that certificate alone, over TLS only (`COUNTERSIGN_TEST_PG_CLIENT_CERT`
    /// and `_KEY`), when the test script names them.
    static var postgresClientCertificate: (certificate: String, key: String)? {
        let environment = ProcessInfo.processInfo.environment
        guard let certificate = environment["COUNTERSIGN_TEST_PG_CLIENT_CERT"], let key = environment["COUNTERSIGN_TEST_PG_CLIENT_KEY"],
            !certificate.isEmpty, !key.isEmpty
        else { return nil }
        return (certificate, key)
    }

    /// This PostgreSQL database, reached through `socket` instead of TCP; dropped through this one.
    func throughSocket(_ socket: String) throws -> TestDatabase {
        guard case .postgres(let url) = location, let components = URLComponents(string: url), let user = components.user else {
            throw TestDatabaseNotPostgres()
        }
        return TestDatabase(location: .postgres("postgres+uds://\(user)@localhost\(socket)#\(components.path.dropFirst())"), dropStatement: nil)
    }

    /// `persistent`: on SQLite, a file that outlives one server, for tests that restart it.
    static func make(persistent: Bool = false) async throws -> TestDatabase {
        guard let adminURL = postgresURL, let components = URLComponents(string: adminURL) else {
            guard persistent else { return TestDatabase(location: .sqliteMemory, dropStatement: nil) }
            return sqliteFile(at: FileManager.default.temporaryDirectory.appendingPathComponent("countersign-\(UUID().uuidString).sqlite").path)
        }
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await run("CREATE DATABASE \"\(name)\"", components: components)
        var testComponents = components
        testComponents.path = "/" + name
        return TestDatabase(location: .postgres(testComponents.string!)) {
            try await run("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)", components: components)
        }
    }

    /// The database at `location`, which the test removes itself if it must.
    static func at(_ location: DatabaseLocation) -> TestDatabase {
        TestDatabase(location: location, dropStatement: nil)
    }

    /// The SQLite file at `path`, removed with its companion files by `drop`.
    static func sqliteFile(at path: String) -> TestDatabase {
        TestDatabase(location: .sqliteFile(path)) {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }

    /// Runs `body` on a database of its own (`make`), removed afterwards whether `body` throws or not.
    static func with(persistent: Bool = false, _ body: (TestDatabase) async throws -> Void) async throws {
        let database = try await make(persistent: persistent)
        do {
            try await body(database)
        } catch {
            try? await database.drop()
            throw error
        }
        try await database.drop()
    }

    /// Removes the test's PostgreSQL database; nothing to do for SQLite in memory.
    func drop() async throws {
        try await dropStatement?()
    }

    private static func run(_ sql: String, components: URLComponents) async throws {
        let configuration = PostgresConnection.Configuration(
            host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password, database: String(components.path.dropFirst()), tls: .disable)
        let connection = try await PostgresConnection.connect(
            configuration: configuration, id: 1, logger: Logger(label: "countersign.tests.database"))
        do {
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "countersign.tests.database"))
            try await connection.close()
        } catch {
            try? await connection.close()
            Issue.record("\(sql): \(String(reflecting: error))")
            throw error
        }
    }
}

struct TestDatabaseNotPostgres: Error {}
