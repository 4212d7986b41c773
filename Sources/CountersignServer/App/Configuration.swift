import Foundation

/// Everything the server reads from its environment, read in one place (docs/CONFIGURATION.md).
///
/// `load` checks every variable and reports all bad ones together, so a misconfigured server stops at
/// start with one message instead of failing later.
public struct Configuration: Sendable {
    /// Production unless started with `--dev`.
    public var mode: Mode
    public var hostname: String
    public var port: Int
    /// Where state lives: a SQLite file or `sqlite::memory:`, or a `postgres://` URL.
    public var database: DatabaseLocation
    /// The token issuer and base of the discovery URLs.
    public var publicURL: String
    /// The admin API key; when nil one is generated at first start and printed once.
    public var adminKey: String?
    /// The directory of the journeys to run; nil for the templates built into the server.
    public var journeysDirectory: String?
    /// How long an interaction may take from start to end.
    public var interactionLifetime: TimeInterval
    /// How long issued tokens are valid.
    public var tokenLifetime: TimeInterval
    /// The key push provider secrets are encrypted with at rest.
    public var masterKey: MasterKeySource
    /// How long interactions, approvals and their push records are kept after they expire.
    public var recordRetention: TimeInterval
    /// How long security events are kept (an audit's year by default): strangers can add them.
    public var securityEventRetention: TimeInterval
    /// How often expired records are looked for.
    public var sweepInterval: TimeInterval
    /// How long one push attempt may take, all its requests to the provider together; longer is a retry.
    public var pushAttemptTimeLimit: TimeInterval
    /// Journeys one client, and one source address, may start per second (per instance); 0: no limit.
    public var startRatePerClient: Int
    public var startRatePerAddress: Int
    /// Wrong admin keys one source address may send per minute before it is refused for the rest of it; 0: no limit.
    public var adminFailuresPerMinute: Int
    /// How long a console session lasts without use (`ConsoleSessions`).
    public var consoleIdleTimeout: TimeInterval
    /// Event streams and inbox long-polls one instance holds open at most.
    public var maximumOpenWaits: Int
    /// A connection on which nothing is read or written for this long is closed.
    public var idleTimeout: TimeInterval
    /// How long a client has to send a whole request head once it has begun (DESIGN.md §6).
    public var headerReadTimeout: TimeInterval = 10
    /// Addresses of the load balancers in front: only a request from one of them may name its client in
    /// `X-Forwarded-For`; from anyone else the header is ignored.
    public var trustedProxies: Set<String>
    /// The bearer token `GET /metrics` asks for; nil: the metrics are served to anyone who reaches them.
    public var metricsToken: String?
    /// Where `POST /admin/v1/backups` writes copies of a SQLite database.
    public var backupDirectory: String

    /// What a start loads besides the operator's own configuration.
    public enum Mode: String, Sendable {
        /// No demo application and no development-only journey; a database holding the demo application
        /// is refused, so an enrollment that trusts the client's word can never reach production.
        case production
        /// The demo application (`demo-web`, `demo-native`) and the development-only journeys, such as the
        /// enrollment that trusts an email. Said loudly at start.
        case development
    }

    /// One documented variable: its name, default and meaning (shown by `countersign serve --help`).
    public struct Variable: Sendable {
        public let name: String
        public let defaultValue: String
        public let meaning: String
    }

    /// The variables, in the order docs/CONFIGURATION.md lists them.
    public static let variables: [Variable] = [
        Variable(name: "COUNTERSIGN_HOST", defaultValue: "127.0.0.1", meaning: "address to listen on"),
        Variable(name: "COUNTERSIGN_PORT", defaultValue: "8080", meaning: "port to listen on"),
        Variable(
            name: "COUNTERSIGN_DATABASE_URL", defaultValue: "./countersign.sqlite",
            meaning: "SQLite file path (or sqlite::memory:), postgres://user:pass@host:port/db (another host: TLS unless sslmode=disable; sslrootcert=CA file; sslcert, sslkey: client certificate) or postgres+uds://user@localhost/socket#db"),
        Variable(name: "COUNTERSIGN_PUBLIC_URL", defaultValue: "http://HOST:PORT", meaning: "public base URL, the token issuer"),
        Variable(name: "COUNTERSIGN_ADMIN_KEY", defaultValue: "(generated at first start)", meaning: "bearer key for /admin/v1"),
        Variable(
            name: "COUNTERSIGN_JOURNEYS_DIR", defaultValue: "(the templates built in)",
            meaning: "directory of journey YAML files, replacing the built-in templates"),
        Variable(name: "COUNTERSIGN_INTERACTION_TTL", defaultValue: "600", meaning: "seconds an interaction may last"),
        Variable(name: "COUNTERSIGN_TOKEN_TTL", defaultValue: "3600", meaning: "seconds an issued token is valid"),
        Variable(
            name: "COUNTERSIGN_MASTER_KEY", defaultValue: "(read from the key file)",
            meaning: "base64 of 32 random bytes; seals secrets at rest (push keys, signing keys, interaction states, idempotent replays)"),
        Variable(
            name: "COUNTERSIGN_MASTER_KEY_FILE", defaultValue: "./countersign.master-key",
            meaning: "key file used when COUNTERSIGN_MASTER_KEY is unset (created with mode 0600)"),
        Variable(
            name: "COUNTERSIGN_RECORD_RETENTION", defaultValue: "86400",
            meaning: "seconds expired interactions, approvals and push records are kept (0: removed at expiry)"),
        Variable(
            name: "COUNTERSIGN_SECURITY_EVENT_RETENTION", defaultValue: "31536000",
            meaning: "seconds security events are kept (a year)"),
        Variable(name: "COUNTERSIGN_SWEEP_INTERVAL", defaultValue: "60", meaning: "seconds between sweeps for expired records and idempotent replays"),
        Variable(
            name: "COUNTERSIGN_PUSH_ATTEMPT_TIME_LIMIT", defaultValue: "20",
            meaning: "seconds one push attempt may take, all its requests to the provider together (at most 30); longer is a retry"),
        Variable(
            name: "COUNTERSIGN_START_RATE_PER_CLIENT", defaultValue: "200",
            meaning: "journeys one client may start per second, per instance (0: no limit)"),
        Variable(
            name: "COUNTERSIGN_START_RATE_PER_ADDRESS", defaultValue: "20",
            meaning: "journeys one source address may start per second, per instance (0: no limit)"),
        Variable(
            name: "COUNTERSIGN_ADMIN_FAILURES_PER_MINUTE", defaultValue: "10",
            meaning: "wrong admin keys one source address may send in a minute; then every admin request from it is refused for the rest of it (0: no limit)"),
        Variable(
            name: "COUNTERSIGN_CONSOLE_IDLE_TIMEOUT", defaultValue: "1800",
            meaning: "seconds a console session lasts without use (at most 1800)"),
        Variable(
            name: "COUNTERSIGN_IDLE_TIMEOUT", defaultValue: "60",
            meaning: "seconds a connection may stay silent before it is closed (more than the 30 s of a long-poll)"),
        Variable(
            name: "COUNTERSIGN_MAX_OPEN_WAITS", defaultValue: "10000",
            meaning: "event streams and inbox long-polls one instance holds open at once"),
        Variable(
            name: "COUNTERSIGN_TRUSTED_PROXIES", defaultValue: "(none)",
            meaning: "comma-separated IP addresses of the load balancers whose X-Forwarded-For names the client"),
        Variable(
            name: "COUNTERSIGN_METRICS_TOKEN", defaultValue: "(none: /metrics is open)",
            meaning: "bearer token a Prometheus scraper must send to GET /metrics (at least 16 characters)"),
        Variable(
            name: "COUNTERSIGN_BACKUP_DIR", defaultValue: "./backups",
            meaning: "directory POST /admin/v1/backups writes SQLite database copies to (created with mode 0700)"),
        Variable(
            name: "LOG_LEVEL", defaultValue: "info",
            meaning: "notice, warning, error or critical log less; debug and trace are raised to info"),
        Variable(name: "LOG_FORMAT", defaultValue: "text", meaning: "json: one JSON object per line"),
    ]

    public init(
        mode: Mode = .production, hostname: String = "127.0.0.1", port: Int = 8080, database: DatabaseLocation = .sqliteFile("./countersign.sqlite"),
        publicURL: String? = nil, adminKey: String? = nil, journeysDirectory: String? = nil,
        interactionLifetime: TimeInterval = 600, tokenLifetime: TimeInterval = 3600,
        masterKey: MasterKeySource = .file(MasterKeySource.defaultFile), recordRetention: TimeInterval = 86400,
        securityEventRetention: TimeInterval = 31_536_000,
        sweepInterval: TimeInterval = 60, pushAttemptTimeLimit: TimeInterval = 20, startRatePerClient: Int = 200, startRatePerAddress: Int = 20,
        adminFailuresPerMinute: Int = 10, consoleIdleTimeout: TimeInterval = 1800,
        maximumOpenWaits: Int = 10000, idleTimeout: TimeInterval = 60, trustedProxies: Set<String> = [], metricsToken: String? = nil,
        backupDirectory: String = "./backups"
    ) {
        self.mode = mode
        self.hostname = hostname
        self.port = port
        self.database = database
        self.publicURL = publicURL ?? "http://\(hostname):\(port)"
        self.adminKey = adminKey
        self.journeysDirectory = journeysDirectory
        self.interactionLifetime = interactionLifetime
        self.tokenLifetime = tokenLifetime
        self.masterKey = masterKey
        self.recordRetention = recordRetention
        self.securityEventRetention = securityEventRetention
        self.sweepInterval = sweepInterval
        self.pushAttemptTimeLimit = pushAttemptTimeLimit
        self.startRatePerClient = startRatePerClient
        self.startRatePerAddress = startRatePerAddress
        self.adminFailuresPerMinute = adminFailuresPerMinute
        self.consoleIdleTimeout = consoleIdleTimeout
        self.maximumOpenWaits = maximumOpenWaits
        self.idleTimeout = idleTimeout
        self.trustedProxies = trustedProxies
        self.metricsToken = metricsToken
        self.backupDirectory = backupDirectory
    }

    /// Reads the configuration from `environment`; flags given on the command line take precedence.
    public static func load(
        environment: [String: String], mode: Mode = .production, hostname: String? = nil, port: Int? = nil
    ) throws(ConfigurationError) -> Configuration {
        var problems: [String] = []
        func value(_ name: String) -> String? {
            guard let raw = environment[name]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
            return raw
        }
        func seconds(_ name: String, default fallback: TimeInterval, zeroAllowed: Bool = false) -> TimeInterval {
            guard let raw = value(name) else { return fallback }
            guard let number = TimeInterval(raw), number.isFinite, number > 0 || (zeroAllowed && number == 0) else {
                problems.append("\(name)='\(raw)' must be a \(zeroAllowed ? "non-negative" : "positive") number of seconds")
                return fallback
            }
            return number
        }

        let host = hostname ?? value("COUNTERSIGN_HOST") ?? "127.0.0.1"
        var listenPort = port ?? 8080
        if port == nil, let raw = value("COUNTERSIGN_PORT") {
            if let parsed = Int(raw), (0...65535).contains(parsed) {
                listenPort = parsed
            } else {
                problems.append("COUNTERSIGN_PORT='\(raw)' must be a port number (0-65535)")
            }
        }
        var database = DatabaseLocation.sqliteFile("./countersign.sqlite")
        if let raw = value("COUNTERSIGN_DATABASE_URL") {
            switch DatabaseLocation(raw) {
            case .some(let location):
                database = location
                if case .postgres(let url) = location {
                    do throws(PostgresTransportSecurity.Refusal) {
                        _ = try PostgresTransportSecurity(url: url)
                    } catch {
                        problems.append("COUNTERSIGN_DATABASE_URL: \(error.reason)")
                    }
                }
            case .none:
                problems.append(
                    "COUNTERSIGN_DATABASE_URL must be a SQLite path, sqlite::memory:, a postgres:// URL with a host and database, "
                        + "or a postgres+uds://user@localhost/socket/path#database URL")
            }
        }
        var publicURL: String?
        if let raw = value("COUNTERSIGN_PUBLIC_URL") {
            // Its origin must be readable: pages there are the server's own (`Request.crossOrigin`).
            if WebOrigin.of(url: raw) != nil {
                publicURL = raw.hasSuffix("/") ? String(raw.dropLast()) : raw
            } else {
                problems.append("COUNTERSIGN_PUBLIC_URL='\(raw)' must be an http(s) URL with an ASCII host (punycode for an international name) and no user")
            }
        }
        let adminKey = value("COUNTERSIGN_ADMIN_KEY")
        if let adminKey, adminKey.count < 16 || Set(adminKey).count < 10 {
            // Sixteen of one character is no key: a guess takes seconds.
            problems.append("COUNTERSIGN_ADMIN_KEY must be at least 16 characters, at least 10 of them different (openssl rand -base64 32)")
        }
        let interactionLifetime = seconds("COUNTERSIGN_INTERACTION_TTL", default: 600)
        let tokenLifetime = seconds("COUNTERSIGN_TOKEN_TTL", default: 3600)
        let recordRetention = seconds("COUNTERSIGN_RECORD_RETENTION", default: 86400, zeroAllowed: true)
        let securityEventRetention = seconds("COUNTERSIGN_SECURITY_EVENT_RETENTION", default: 31_536_000)
        let sweepInterval = seconds("COUNTERSIGN_SWEEP_INTERVAL", default: 60)
        let pushAttemptTimeLimit = seconds("COUNTERSIGN_PUSH_ATTEMPT_TIME_LIMIT", default: 20)
        if pushAttemptTimeLimit > PushSender.lease / 2 {
            problems.append(
                "COUNTERSIGN_PUSH_ATTEMPT_TIME_LIMIT must be at most \(Int(PushSender.lease / 2)) seconds, half the lease under which an instance sends a push")
        }
        func count(_ name: String, default fallback: Int, zeroAllowed: Bool) -> Int {
            guard let raw = value(name) else { return fallback }
            guard let number = Int(raw), number > 0 || (zeroAllowed && number == 0) else {
                problems.append("\(name)='\(raw)' must be a \(zeroAllowed ? "non-negative" : "positive") whole number")
                return fallback
            }
            return number
        }
        let startRatePerClient = count("COUNTERSIGN_START_RATE_PER_CLIENT", default: 200, zeroAllowed: true)
        let startRatePerAddress = count("COUNTERSIGN_START_RATE_PER_ADDRESS", default: 20, zeroAllowed: true)
        let adminFailuresPerMinute = count("COUNTERSIGN_ADMIN_FAILURES_PER_MINUTE", default: 10, zeroAllowed: true)
        let maximumOpenWaits = count("COUNTERSIGN_MAX_OPEN_WAITS", default: 10000, zeroAllowed: false)
        let consoleIdleTimeout = seconds("COUNTERSIGN_CONSOLE_IDLE_TIMEOUT", default: ConsoleSessions.longestIdle)
        if consoleIdleTimeout > ConsoleSessions.longestIdle {
            problems.append("COUNTERSIGN_CONSOLE_IDLE_TIMEOUT must be at most \(Int(ConsoleSessions.longestIdle)) seconds")
        }
        let idleTimeout = seconds("COUNTERSIGN_IDLE_TIMEOUT", default: 60)
        if idleTimeout <= TimeInterval(ApprovalRoutes.maximumWait) {
            problems.append("COUNTERSIGN_IDLE_TIMEOUT must be more than \(ApprovalRoutes.maximumWait) seconds, the longest an inbox long-poll waits")
        }
        var masterKey = MasterKeySource.file(value("COUNTERSIGN_MASTER_KEY_FILE") ?? MasterKeySource.defaultFile)
        if let raw = value("COUNTERSIGN_MASTER_KEY") {
            if let bytes = Data(base64Encoded: raw), bytes.count == MasterKeySource.keyLength {
                masterKey = .key(bytes)
            } else {
                problems.append("COUNTERSIGN_MASTER_KEY must be the base64 of \(MasterKeySource.keyLength) random bytes (openssl rand -base64 32)")
            }
        }
        var trustedProxies: Set<String> = []
        for address in (value("COUNTERSIGN_TRUSTED_PROXIES") ?? "").split(separator: ",") {
            let address = address.trimmingCharacters(in: .whitespaces)
            if ClientAddress.isIPAddress(address) {
                trustedProxies.insert(address)
            } else {
                problems.append("COUNTERSIGN_TRUSTED_PROXIES: '\(address)' is not an IP address")
            }
        }
        let metricsToken = value("COUNTERSIGN_METRICS_TOKEN")
        if let metricsToken, metricsToken.count < 16 {
            problems.append("COUNTERSIGN_METRICS_TOKEN must be at least 16 characters")
        }
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
        return Configuration(
            mode: mode, hostname: host, port: listenPort, database: database, publicURL: publicURL, adminKey: adminKey,
            journeysDirectory: value("COUNTERSIGN_JOURNEYS_DIR"),
            interactionLifetime: interactionLifetime, tokenLifetime: tokenLifetime, masterKey: masterKey,
            recordRetention: recordRetention, securityEventRetention: securityEventRetention, sweepInterval: sweepInterval, pushAttemptTimeLimit: pushAttemptTimeLimit,
            startRatePerClient: startRatePerClient,
            startRatePerAddress: startRatePerAddress, adminFailuresPerMinute: adminFailuresPerMinute,
            consoleIdleTimeout: consoleIdleTimeout, maximumOpenWaits: maximumOpenWaits, idleTimeout: idleTimeout,
            trustedProxies: trustedProxies, metricsToken: metricsToken, backupDirectory: value("COUNTERSIGN_BACKUP_DIR") ?? "./backups")
    }
}

/// Where the server keeps its state.
public enum DatabaseLocation: Sendable, Equatable {
    case sqliteFile(String)
    case sqliteMemory
    case postgres(String)

    /// Parses the value of `COUNTERSIGN_DATABASE_URL`; nil when it is none of the accepted forms.
    public init?(_ text: String) {
        if text.hasPrefix("postgres") {
            guard (try? PostgresURL(text)) != nil else { return nil }
            self = .postgres(text)
        } else if text == "sqlite::memory:" {
            self = .sqliteMemory
        } else if text.hasPrefix("sqlite://") {
            let path = String(text.dropFirst("sqlite://".count))
            guard !path.isEmpty else { return nil }
            self = .sqliteFile(path)
        } else if text.contains("://") {
            return nil
        } else {
            self = .sqliteFile(text)
        }
    }
}

/// Where the master key comes from.
public enum MasterKeySource: Sendable, Equatable {
    /// The key itself (`COUNTERSIGN_MASTER_KEY`).
    case key(Data)
    /// A file holding the key in base64, created with mode 0600 at first start when missing.
    case file(String)

    public static let defaultFile = "./countersign.master-key"
    /// AES-256: 32 bytes.
    public static let keyLength = 32
}

/// Every problem found in the environment.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let problems: [String]
    public var description: String {
        "Invalid configuration:\n" + problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}
