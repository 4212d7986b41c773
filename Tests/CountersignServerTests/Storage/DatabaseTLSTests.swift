import CountersignCore
import CountersignPushTesting
import CountersignServer
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import PostgresNIO
import Synchronization
import Testing

@Suite("TLS to PostgreSQL")
struct DatabaseTLSTests {
    @Test("a database on another host is reached over TLS only: when the other end answers that it has none, the server stops before it sends its user name or password")
    func strippedTLS() async throws {
        // The machine's own name: not `localhost` or a loopback address as written, so the server takes it
        // for another host, and it still reaches the listener below.
        let host = ProcessInfo.processInfo.hostName
        try #require(!["localhost", "127.0.0.1", "::1"].contains(host.lowercased()))
        let database = try await PlainTextDatabase.start()
        let error = await TestServer.startRefusal(database: "postgres://countersign:secret-password-0123@\(host):\(database.port)/countersign")
        await database.stop()
        let connections = database.received
        #expect(!connections.isEmpty, "the server reached the stand-in")
        for bytes in connections {
            #expect(bytes == PlainTextDatabase.tlsRequest, "a connection sent only its request for TLS, nothing in plain text")
        }
        #expect("\(error)".contains("answered that it has no TLS"), "\(error)")
    }

    @Test("sslmode=prefer for a database on another host, an unknown sslmode, TLS through the Unix socket, and an sslrootcert that is unused or no file of PEM certificates are refused at start, each with its reason")
    func refusedURLs() throws {
        let authority = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-\(UUID().uuidString).pem").path
        try TestCertificateAuthority().rootCertificatePEM.write(toFile: authority, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: authority) }
        for (refused, reason) in [
            ("postgres://u:p@db.example:5432/cs?sslmode=prefer", "sslmode=prefer would go on in plain text"),
            ("postgres://u:p@10.0.0.7/cs?ssl=true", "ssl=true would go on in plain text"),
            ("postgres://u:p@db.example/cs?sslmode=Require", "sslmode=Require is none of"),
            ("postgres+uds://u@localhost/run/.s.PGSQL.5432?sslmode=require#cs", "no TLS through its Unix socket"),
            ("postgres://u:p@db.example/cs?sslmode=require&sslrootcert=/nonexistent/ca.pem", "not a readable file of PEM certificates"),
            ("postgres://u:p@db.example/cs?sslrootcert=\(#filePath)", "not a readable file of PEM certificates"),
            ("postgres://u:p@db.example/cs?sslmode=disable&sslrootcert=\(authority)", "sslrootcert is given, but TLS is off"),
        ] {
            Self.expectRefused(refused, because: reason)
        }
        for accepted in [
            "postgres://u:p@db.example/cs", "postgres://u:p@db.example/cs?sslmode=verify-full&sslrootcert=\(authority)",
            "postgres://u:p@db.example/cs?sslmode=disable", "postgres://u:p@127.0.0.1/cs?sslmode=prefer", "postgres://u:p@localhost/cs",
            "postgres://u:p@db.example/cs?sslmode=verify-full&sslrootcert=system",
        ] {
            #expect(throws: Never.self, "\(accepted)") { try Configuration.load(environment: ["COUNTERSIGN_DATABASE_URL": accepted]) }
        }
    }

    @Test("a client certificate is refused at start when sslcert or sslkey is missing, when others may read the key, when the key is not the certificate's, or when TLS is off")
    func refusedClientCertificates() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let authority = try TestCertificateAuthority()
        let issued = try authority.clientCertificatePEM(commonName: "countersign")
        let other = try authority.clientCertificatePEM(commonName: "countersign")
        func file(_ name: String, _ text: String, mode: Int = 0o600) -> String {
            let path = directory + "/" + name
            _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode])
            return path
        }
        let (certificate, key) = (file("client.pem", issued.certificate), file("client.key", issued.key))
        let readableKey = file("readable.key", issued.key, mode: 0o644)
        let otherKey = file("other.key", other.key)
        let base = "postgres://countersign@db.example/cs?sslmode=require"
        for (refused, reason) in [
            ("\(base)&sslcert=\(certificate)", "sslcert and sslkey go together"),
            ("\(base)&sslkey=\(key)", "sslcert and sslkey go together"),
            ("\(base)&sslcert=\(certificate)&sslkey=\(readableKey)", "which others may read (mode 644); run chmod 600 on it"),
            ("\(base)&sslcert=\(certificate)&sslkey=\(otherKey)", "is not the key of the certificate"),
            ("\(base)&sslcert=\(certificate)&sslkey=\(certificate)", "is not a readable PEM private key"),
            ("\(base)&sslcert=\(key)&sslkey=\(key)", "sslcert names \(key), which is not a readable file of PEM certificates"),
            ("postgres://countersign@db.example/cs?sslmode=disable&sslcert=\(certificate)&sslkey=\(key)", "sslcert is given, but TLS is off"),
        ] {
            Self.expectRefused(refused, because: reason)
        }
        let accepted = "\(base)&sslcert=\(certificate)&sslkey=\(key)"
        #expect(throws: Never.self) { try Configuration.load(environment: ["COUNTERSIGN_DATABASE_URL": accepted]) }
    }

    /// Expects `url` refused at start with a problem about the database URL that says `reason`.
    private static func expectRefused(_ url: String, because reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try Configuration.load(environment: ["COUNTERSIGN_DATABASE_URL": url])
            Issue.record("\(url) was accepted", sourceLocation: sourceLocation)
        } catch {
            #expect(
                error.problems.contains { $0.hasPrefix("COUNTERSIGN_DATABASE_URL: ") && $0.contains(reason) }, "\(url): \(error)",
                sourceLocation: sourceLocation)
        }
    }
}

/// The test script's PostgreSQL cluster offers TLS with a certificate for `localhost` from an authority of
/// the tests' own (`TestDatabase.postgresAuthority`).
@Suite("TLS to a real PostgreSQL", .enabled(if: TestDatabase.postgresURL != nil && TestDatabase.postgresAuthority != nil))
struct DatabaseTLSOnPostgres {

    @Test("with sslmode=require and the operator's authority in sslrootcert, every connection of the server to PostgreSQL is encrypted, and a flow finishes")
    func encryptedFlow() async throws {
        try await TestDatabase.with { database in
            let url = try Self.url(of: database, host: "localhost", query: "sslmode=require&sslrootcert=\(try #require(TestDatabase.postgresAuthority))")
            let connections = try await Self.connectionsOfAFlow(on: url, database: database)
            #expect(connections.allSatisfy { $0.encrypted }, "\(connections)")
        }
    }

    @Test("a certificate the server cannot verify (from an authority it was not told to trust, or for another name) stops it at start")
    func unverifiedCertificate() async throws {
        try await TestDatabase.with { database in
            let authority = try #require(TestDatabase.postgresAuthority)
            let untrusted = await TestServer.startRefusal(database: try Self.url(of: database, host: "localhost", query: "sslmode=require"))
            #expect("\(untrusted)".contains("CERTIFICATE_VERIFY_FAILED"), "\(untrusted)")
            // The cluster's certificate names `localhost` only, not the address 127.0.0.1 that reaches it too.
            let otherName = await TestServer.startRefusal(
                database: try Self.url(of: database, host: "127.0.0.1", query: "sslmode=require&sslrootcert=\(authority)"))
            #expect("\(otherName)".contains("failedToValidateHostname"), "\(otherName)")
        }
    }

    @Test("where PostgreSQL signs the server in by a client certificate, the server presents the one sslcert names, with sslkey's key, on every connection, and a flow finishes; without it, or with a look-alike from another authority, PostgreSQL refuses the start", .enabled(if: TestDatabase.postgresClientCertificate != nil))
    func clientCertificate() async throws {
        let client = try #require(TestDatabase.postgresClientCertificate)
        let authority = try #require(TestDatabase.postgresAuthority)
        try await TestDatabase.with { database in
            let verified = "sslmode=require&sslrootcert=\(authority)"
            let url = try Self.url(of: database, host: "localhost", user: Self.certifiedRole, query: "\(verified)&sslcert=\(client.certificate)&sslkey=\(client.key)")
            let connections = try await Self.connectionsOfAFlow(on: url, database: database)
            #expect(connections.allSatisfy { $0.encrypted && $0.clientName == "/CN=\(Self.certifiedRole)" }, "\(connections)")

            // Someone who knows the role but holds no key of the authority's: none, or one of his own making.
            let without = await TestServer.startRefusal(database: try Self.url(of: database, host: "localhost", user: Self.certifiedRole, query: verified))
            #expect("\(without)".contains("SQLSTATE 28000"), "\(without)")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let lookAlike = try TestCertificateAuthority().clientCertificatePEM(commonName: Self.certifiedRole)
            _ = FileManager.default.createFile(atPath: directory + "/c.pem", contents: Data(lookAlike.certificate.utf8), attributes: [.posixPermissions: 0o600])
            _ = FileManager.default.createFile(atPath: directory + "/c.key", contents: Data(lookAlike.key.utf8), attributes: [.posixPermissions: 0o600])
            let forged = await TestServer.startRefusal(
                database: try Self.url(of: database, host: "localhost", user: Self.certifiedRole, query: "\(verified)&sslcert=\(directory)/c.pem&sslkey=\(directory)/c.key"))
            #expect("\(forged)".contains("client certificate"), "\(forged)")
        }
    }

    /// Runs a server on `url` (`database` with other settings), has it finish a web sign-in approved on the
    /// phone, and returns its connections to `database` as PostgreSQL sees them, at least the stores' and
    /// the one listening for events.
    private static func connectionsOfAFlow(on url: String, database: TestDatabase) async throws -> [(encrypted: Bool, clientName: String?)] {
        var connections: [(encrypted: Bool, clientName: String?)] = []
        try await TestServer.run(on: .at(.postgres(url)), clock: TestClock(), masterKey: TestServer.randomMasterKey()) { server in
            try await eventually("the instance is ready") { try await server.send(.GET, "/readyz").status == .ok }
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.signIn(email: "ada@example.com")
            _ = try await phone.approve()
            let claims = try await server.verifiedClaims(try #require(try await browser.poll().token))
            #expect(claims.deviceID == phone.deviceID)
            connections = try await Self.connections(to: database)
        }
        #expect(connections.count >= 2, "the stores' connections and the one listening for events")
        return connections
    }

    /// The role the test script's cluster signs in by its client certificate alone.
    private static let certifiedRole = "countersign_certified"

    /// `database`'s URL with `host` and `query` in place of the test script's, and `user` without a password if given.
    private static func url(of database: TestDatabase, host: String, user: String? = nil, query: String) throws -> String {
        guard case .postgres(let url) = database.location, var components = URLComponents(string: url) else { throw TestDatabaseNotPostgres() }
        components.host = host
        components.query = query
        if let user {
            components.user = user
            components.password = nil
        }
        return try #require(components.string)
    }

    /// The connections to `database` other than this one's: whether each is encrypted, and the name in the
    /// client certificate it presented.
    private static func connections(to database: TestDatabase) async throws -> [(encrypted: Bool, clientName: String?)] {
        guard case .postgres(let url) = database.location, let components = URLComponents(string: url) else { throw TestDatabaseNotPostgres() }
        let name = String(components.path.dropFirst())
        let logger = Logger(label: "countersign.tests.tls")
        let connection = try await PostgresConnection.connect(
            configuration: .init(
                host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "postgres",
                password: components.password, database: name, tls: .disable),
            id: 1, logger: logger)
        do {
            let rows = try await connection.query(
                "SELECT s.ssl, s.client_dn FROM pg_stat_activity a JOIN pg_stat_ssl s ON s.pid = a.pid WHERE a.datname = \(name) AND a.pid <> pg_backend_pid()",
                logger: logger)
            var connections: [(encrypted: Bool, clientName: String?)] = []
            for try await (encrypted, clientName) in rows.decode((Bool, String?).self) { connections.append((encrypted, clientName)) }
            try await connection.close()
            return connections
        } catch {
            try? await connection.close()
            throw error
        }
    }
}

/// A stand-in for a PostgreSQL server without TLS, or for someone on the way who says the server has
/// none: it answers the client's request for TLS with "no" and keeps every byte each connection sends.
private final class PlainTextDatabase: Sendable {
    /// PostgreSQL's SSLRequest: its length (8) and the code 80877103.
    static let tlsRequest: [UInt8] = [0, 0, 0, 8, 0x04, 0xD2, 0x16, 0x2F]

    private let connections = Mutex<[[UInt8]]>([])
    private let channel = Mutex<(any Channel)?>(nil)

    var received: [[UInt8]] { connections.withLock { $0 } }
    var port: Int { channel.withLock { $0?.localAddress?.port ?? 0 } }

    /// Listens on every address of this machine, whichever the machine's name resolves to.
    static func start() async throws -> PlainTextDatabase {
        let database = PlainTextDatabase()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                let index = database.connections.withLock { all in
                    all.append([])
                    return all.count - 1
                }
                return channel.pipeline.addHandler(Connection(database: database, index: index))
            }
            .bind(host: "0.0.0.0", port: 0).get()
        database.channel.withLock { $0 = channel }
        return database
    }

    func stop() async {
        try? await channel.withLock { $0 }?.close()
    }

    /// One connection's bytes, kept at `index`.
    private final class Connection: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let database: PlainTextDatabase
        let index: Int

        init(database: PlainTextDatabase, index: Int) {
            self.database = database
            self.index = index
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
            let total = database.connections.withLock { all in
                all[index] += bytes
                return all[index]
            }
            if total == PlainTextDatabase.tlsRequest {
                context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: "N")), promise: nil)
            }
        }
    }
}
