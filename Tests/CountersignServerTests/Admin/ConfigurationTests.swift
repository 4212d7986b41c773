import CountersignServer
import Foundation
import Logging
import Testing

@Suite("Configuration from the environment")
struct ConfigurationTests {
    @Test("defaults: 127.0.0.1:8080, SQLite file, the journey templates built in")
    func defaults() throws {
        let configuration = try Configuration.load(environment: [:])
        #expect(configuration.hostname == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.database == .sqliteFile("./countersign.sqlite"))
        #expect(configuration.publicURL == "http://127.0.0.1:8080")
        #expect(configuration.journeysDirectory == nil)
        #expect(try Configuration.load(environment: ["COUNTERSIGN_JOURNEYS_DIR": "/srv/journeys"]).journeysDirectory == "/srv/journeys")
        #expect(configuration.interactionLifetime == 600)
        #expect(configuration.masterKey == .file("./countersign.master-key"))
        #expect(configuration.recordRetention == 86400)
        #expect(configuration.sweepInterval == 60)
        #expect(configuration.mode == .production)
        #expect(configuration.startRatePerClient == 200 && configuration.startRatePerAddress == 20)
        #expect(configuration.maximumOpenWaits == 10000 && configuration.idleTimeout == 60)
    }

    @Test("without COUNTERSIGN_JOURNEYS_DIR the server runs the templates built in, the development ones in development only")
    func builtInJourneys() async throws {
        try await TestServer.run(adjust: { $0.journeysDirectory = nil }) { server in
            for journey in ["web_login", "web_login_biometric_only"] {
                let started = try await server.send(.POST, "/v1/journeys/\(journey)/start", json: ["client_id": "demo-web"])
                #expect(started.status == .ok, "\(journey)")
            }
        }
        try await TestServer.run(adjust: { $0.journeysDirectory = nil; $0.mode = .production }) { server in
            #expect(try await server.admin(.POST, "applications", json: ["id": "bank", "name": "Bank"]).status == .created)
            #expect(try await server.admin(.POST, "applications/bank/clients", json: ["id": "bank-web", "name": "Web", "kind": "web"]).status == .created)
            #expect(try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "bank-web"]).status == .ok)
            let demo = try await server.send(.POST, "/v1/journeys/web_login_biometric_only/start", json: ["client_id": "bank-web"])
            #expect(demo.status == .notFound)
        }
    }

    @Test("a configured admin key of one character repeated, or of few different ones, is refused: a guess would take seconds", arguments: [
        String(repeating: "a", count: 16), String(repeating: "ab", count: 20), "123412341234123412341234",
    ])
    func weakAdminKey(key: String) throws {
        #expect(throws: ConfigurationError.self) { try Configuration.load(environment: ["COUNTERSIGN_ADMIN_KEY": key]) }
        #expect(try Configuration.load(environment: ["COUNTERSIGN_ADMIN_KEY": "k7Qz-2mXv9LpR4sT"]).adminKey == "k7Qz-2mXv9LpR4sT")
    }

    @Test("expired records may be removed at expiry (retention 0), but sweeps need a positive interval")
    func retention() throws {
        let configuration = try Configuration.load(environment: ["COUNTERSIGN_RECORD_RETENTION": "0", "COUNTERSIGN_SWEEP_INTERVAL": "5"])
        #expect(configuration.recordRetention == 0)
        #expect(configuration.sweepInterval == 5)
        #expect(throws: ConfigurationError.self) { try Configuration.load(environment: ["COUNTERSIGN_SWEEP_INTERVAL": "0"]) }
        #expect(throws: ConfigurationError.self) { try Configuration.load(environment: ["COUNTERSIGN_RECORD_RETENTION": "-1"]) }
    }

    @Test("the master key comes from COUNTERSIGN_MASTER_KEY (32 bytes in base64) or the named key file")
    func masterKey() throws {
        let key = Data((0..<32).map { UInt8($0) })
        #expect(try Configuration.load(environment: ["COUNTERSIGN_MASTER_KEY": key.base64EncodedString()]).masterKey == .key(key))
        #expect(try Configuration.load(environment: ["COUNTERSIGN_MASTER_KEY_FILE": "/etc/countersign/key"]).masterKey == .file("/etc/countersign/key"))
        #expect(throws: ConfigurationError.self) {
            try Configuration.load(environment: ["COUNTERSIGN_MASTER_KEY": Data(repeating: 1, count: 16).base64EncodedString()])
        }
    }

    @Test("a postgres URL selects PostgreSQL; flags win over the environment")
    func postgresAndFlags() throws {
        let configuration = try Configuration.load(
            environment: ["COUNTERSIGN_DATABASE_URL": "postgres://u:p@db:5432/cs", "COUNTERSIGN_PORT": "9000"], port: 9100)
        #expect(configuration.database == .postgres("postgres://u:p@db:5432/cs"))
        #expect(configuration.port == 9100)
    }

    @Test("a postgres URL without a user, a host or a database is refused at start", arguments: [
        "postgres://db:5432/cs", "postgres://u:p@:5432/cs", "postgres://u:p@db:5432", "postgres://u:p@db:5432/", "postgresx://u:p@db/cs",
    ])
    func postgresIncomplete(url: String) {
        #expect(throws: ConfigurationError.self) { try Configuration.load(environment: ["COUNTERSIGN_DATABASE_URL": url]) }
    }

    @Test("a postgres+uds URL selects PostgreSQL through its Unix socket; one without a user, socket path or database, or naming another host or a port, is refused")
    func postgresSocket() throws {
        let url = "postgres+uds://countersign@localhost/var/run/postgresql/.s.PGSQL.5432#countersign"
        #expect(try Configuration.load(environment: ["COUNTERSIGN_DATABASE_URL": url]).database == .postgres(url))
        #expect(DatabaseLocation("postgresql+uds:///var/run/postgresql/.s.PGSQL.5432#cs") == nil, "no user")
        for refused in [
            "postgres+uds://u@localhost/#cs", "postgres+uds://u@localhost/var/run/postgresql/.s.PGSQL.5432",
            "postgres+uds://u@db.example/var/run/postgresql/.s.PGSQL.5432#cs", "postgres+uds://u@localhost:5432/run/.s.PGSQL.5432#cs",
        ] {
            #expect(throws: ConfigurationError.self, "\(refused)") { try Configuration.load(environment: ["COUNTERSIGN_DATABASE_URL": refused]) }
        }
    }

    @Test("every bad variable is named at once")
    func reportsEveryProblem() {
        do {
            _ = try Configuration.load(environment: [
                "COUNTERSIGN_PORT": "eighty", "COUNTERSIGN_DATABASE_URL": "mysql://x/y", "COUNTERSIGN_PUBLIC_URL": "ftp://x",
                "COUNTERSIGN_ADMIN_KEY": "short", "COUNTERSIGN_INTERACTION_TTL": "-5", "COUNTERSIGN_TOKEN_TTL": "soon",
                "COUNTERSIGN_MASTER_KEY": "not base64!", "COUNTERSIGN_RECORD_RETENTION": "a day", "COUNTERSIGN_SWEEP_INTERVAL": "-1",
                "COUNTERSIGN_START_RATE_PER_CLIENT": "-3", "COUNTERSIGN_START_RATE_PER_ADDRESS": "many", "COUNTERSIGN_MAX_OPEN_WAITS": "0",
                "COUNTERSIGN_IDLE_TIMEOUT": "10", "COUNTERSIGN_PUSH_ATTEMPT_TIME_LIMIT": "31",
            ])
            Issue.record("expected a configuration error")
        } catch {
            let names = ["COUNTERSIGN_PORT", "COUNTERSIGN_DATABASE_URL", "COUNTERSIGN_PUBLIC_URL", "COUNTERSIGN_ADMIN_KEY",
                         "COUNTERSIGN_INTERACTION_TTL", "COUNTERSIGN_TOKEN_TTL", "COUNTERSIGN_MASTER_KEY",
                         "COUNTERSIGN_RECORD_RETENTION", "COUNTERSIGN_SWEEP_INTERVAL", "COUNTERSIGN_START_RATE_PER_CLIENT",
                         "COUNTERSIGN_START_RATE_PER_ADDRESS", "COUNTERSIGN_MAX_OPEN_WAITS", "COUNTERSIGN_IDLE_TIMEOUT",
                         "COUNTERSIGN_PUSH_ATTEMPT_TIME_LIMIT"]
            #expect(error.problems.count == names.count)
            for name in names { #expect(error.description.contains(name)) }
        }
    }

    @Test("a production server whose public URL is plain http (not the loopback) warns at start that phones will refuse its enrollment links", arguments: [
        ("http://countersign.test", true), ("https://countersign.test", false), ("http://127.0.0.1:8080", false),
    ])
    func plainHTTPPublicURL(publicURL: String, warned: Bool) async throws {
        let store = LogStore()
        try await TestServer.run(
            adjust: { $0.mode = .production; $0.publicURL = publicURL },
            logger: Logger(label: "countersign.tests.capture") { _ in CapturingLogHandler(store: store) }
        ) { _ in }
        #expect(store.lines.withLock { $0 }.contains { $0.contains("phones will refuse the enrollment links") } == warned)
    }

    @Test("a public URL whose origin cannot be read is refused (pages there are the server's own)", arguments: [
        "https://user@auth.bank.example", "https://bänk.example",
    ])
    func publicURLWithoutOrigin(url: String) {
        #expect(throws: ConfigurationError.self) { try Configuration.load(environment: ["COUNTERSIGN_PUBLIC_URL": url]) }
        #expect((try? Configuration.load(environment: ["COUNTERSIGN_PUBLIC_URL": "https://auth.bank.example/login"])) != nil)
    }
}
