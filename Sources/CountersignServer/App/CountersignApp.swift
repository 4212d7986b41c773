import CountersignCore
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The assembled server: its routes, and the background parts that live as long as it does (the push
/// sender, the expiry sweep, the PostgreSQL listener, the storage itself).
///
/// ```swift
/// let app = try await CountersignApp.make(configuration: try Configuration.load(environment: ProcessInfo.processInfo.environment), logger: logger)
/// try await app.application().runService()
/// ```
public struct CountersignApp: Sendable {
    /// Collaborators the server takes from outside, replaceable in tests.
    public struct Dependencies: Sendable {
        public var clock: any WallClock
        /// Shows a newly generated admin key to the operator (once, at first start).
        public var announceAdminKey: @Sendable (String) -> Void
        /// Sees the SQL (never the values bound) of every statement the stores run: for tests that compare
        /// the work two requests do.
        public var statementObserver: (@Sendable (String) -> Void)?

        public init(
            clock: any WallClock = SystemClock(), announceAdminKey: @escaping @Sendable (String) -> Void = { _ in },
            statementObserver: (@Sendable (String) -> Void)? = nil
        ) {
            self.clock = clock
            self.announceAdminKey = announceAdminKey
            self.statementObserver = statementObserver
        }
    }

    /// Every route, behind the server's middlewares.
    public let responder: RouterResponder<ServerRequestContext>
    /// Every route as `METHOD /path/{parameter}`.
    public let routes: [String]
    /// The background parts, in the order they start; they stop in the reverse order, after the HTTP server.
    public let services: [any Service]
    public let logger: Logger
    let configuration: Configuration
    let storage: Storage
    /// The expiry sweep, which also runs every `sweepInterval` on its own.
    let sweeper: ExpirySweeper

    /// The HTTP server with the background parts, listening where the configuration says.
    public func application(
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> Application<RouterResponder<ServerRequestContext>> {
        Application(
            responder: responder, server: httpServer,
            configuration: .init(address: .hostname(configuration.hostname, port: configuration.port), serverName: nil),
            services: services, onServerRunning: onServerRunning, logger: logger)
    }

    /// HTTP/1.1 with the configured idle timeout (a connection silent for this long is closed; an events
    /// stream writes a keep-alive every 15 s) and the guards on request heads (`GuardedHTTP1Channel`).
    public var httpServer: HTTPServerBuilder {
        .guardedHTTP1(
            idleTimeout: .milliseconds(Int64(configuration.idleTimeout * 1000)),
            headerReadTimeout: .milliseconds(Int64(configuration.headerReadTimeout * 1000)))
    }

    /// Opens the database (migrated), loads the journeys and keys, and builds the routes. The parts opened
    /// are closed again when a step fails.
    public static func make(
        configuration: Configuration, dependencies: Dependencies = Dependencies(), logger: Logger
    ) async throws -> CountersignApp {
        var logger = logger
        // Below info, the libraries log raw request headers (bearer tokens) and the database layer logs
        // the values of every query (interaction state with web OTPs, token signing keys): never log below info.
        if logger.logLevel < .info { logger.logLevel = .info }
        let parts = ServerParts()
        do {
            return try await assemble(configuration: configuration, dependencies: dependencies, logger: logger, parts: parts)
        } catch {
            await parts.shutdownAll()
            throw error
        }
    }

    private static func assemble(
        configuration: Configuration, dependencies: Dependencies, logger: Logger, parts: ServerParts
    ) async throws -> CountersignApp {
        let runtime = DatabaseSetup.Runtime(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        let metrics = ServerMetrics()
        // Held until the start has settled the database's first secrets (below); a part, so that a start
        // failing before then lets it go too.
        let startupLock = try await DatabaseSetup.startupLock(for: configuration.database, on: runtime)
        if let startupLock { parts.add(startupLock) }
        let storage = try await DatabaseSetup.open(
            configuration.database, on: runtime, metrics: metrics, observer: dependencies.statementObserver)
        // Added first, so it closes last: after the background services that use it have stopped.
        parts.add(StorageLifetime(storage: storage))
        let clock = dependencies.clock

        switch configuration.mode {
        case .development: try await DevelopmentMode.prepare(storage, clock: clock, logger: logger)
        case .production: try await DevelopmentMode.refuseDemoApplication(storage)
        }
        try await ConsoleApplication.prepare(storage, clock: clock)
        let journeys = try JourneyRegistry.load(
            directory: configuration.journeysDirectory, development: configuration.mode == .development)
        let detailTypes = try AuthorizationDetailTypes.load(journeysDirectory: configuration.journeysDirectory)
        let secretBox = try SecretBox.load(configuration.masterKey)
        let tokenIssuer = try await TokenIssuer.bootstrap(
            keyVault: SigningKeyVault(storage: storage, secrets: secretBox), issuer: configuration.publicURL,
            lifetime: configuration.tokenLifetime, clock: clock)
        let securityEvents = SecurityEvents(storage: storage, clock: clock, logger: logger)
        var adminKeys = try await AdminAccess.bootstrap(
            configuredKey: configuration.adminKey, failuresPerMinute: configuration.adminFailuresPerMinute, storage: storage, clock: clock, securityEvents: securityEvents,
            announce: dependencies.announceAdminKey)
        let consoleSessions = ConsoleSessions(
            storage: storage, clock: clock, tokenIssuer: tokenIssuer, securityEvents: securityEvents, idle: configuration.consoleIdleTimeout,
            issuer: configuration.publicURL,
            secure: configuration.mode == .production || configuration.publicURL.lowercased().hasPrefix("https://"))
        adminKeys.sessions = consoleSessions
        let events = try eventBus(for: configuration.database, storage: storage, logger: logger, parts: parts)
        let pushClient = PushHTTPClient()
        // Registered at once, so the client is closed even when start-up fails below. Shutdown runs in
        // reverse: the sender stops before its client closes.
        parts.add(pushClient)
        let gateways = PushGateways(
            configs: storage.pushConfigs, secrets: secretBox, client: pushClient.client, inbox: InboxPushGateway(events: events),
            attemptTimeLimit: configuration.pushAttemptTimeLimit, logger: logger, now: { clock.now() })
        try await gateways.openAll()
        let hashKey = try await ServerSecrets.hashKey(on: storage, secrets: secretBox)
        await startupLock?.release()
        let approvals = ApprovalLifecycle(
            storage: storage, clock: clock, hashKey: hashKey, events: events, inbox: gateways.inbox,
            limiter: ApprovalLimiter(storage: storage, clock: clock, securityEvents: securityEvents), securityEvents: securityEvents,
            metrics: metrics)
        let enrollmentCodes = EnrollmentCodes(storage: storage, key: hashKey, clock: clock, publicURL: configuration.publicURL)
        let pushSender = PushSender(
            storage: storage, gateways: gateways, clock: clock, events: events, approvals: approvals, retryPolicy: PushRetryPolicy(),
            attemptTimeLimit: configuration.pushAttemptTimeLimit, metrics: metrics, logger: logger)
        parts.add(pushSender)
        parts.add(CIBANotifier(
            storage: storage, client: pushClient.client, secrets: secretBox, clock: clock, events: events, metrics: metrics, logger: logger))
        let sweeper = ExpirySweeper(
            storage: storage, clock: clock, retention: configuration.recordRetention,
            securityEventRetention: configuration.securityEventRetention, interval: configuration.sweepInterval, logger: logger)
        parts.add(sweeper)
        let evidenceSealer = try await EvidenceSealer(secrets: secretBox, issuer: configuration.publicURL, clock: clock)
        let services = JourneyServices(
            storage: storage, tokenIssuer: tokenIssuer, evidenceSealer: evidenceSealer, clock: clock, approvals: approvals,
            enrollmentCodes: enrollmentCodes, recentRefusals: RecentRefusals())
        let interactions = InteractionService(
            services: services, journeys: journeys, interactionLifetime: configuration.interactionLifetime, secrets: secretBox,
            startLimiter: StartRateLimiter(
                perClient: configuration.startRatePerClient, perAddress: configuration.startRatePerAddress, clock: clock, securityEvents: securityEvents),
            metrics: metrics)
        let openWaits = OpenWaits(total: configuration.maximumOpenWaits)
        let verifier = DeviceSignatureVerifier(storage: storage, clock: clock, securityEvents: securityEvents)

        let router = Router(context: ServerRequestContext.self)
        router.add(middleware: RequestLogMiddleware(metrics: metrics))
        router.add(middleware: ApplicationCORSMiddleware(storage: storage, policy: OriginPolicy(
            publicOrigin: WebOrigin.of(url: configuration.publicURL), hostIsOwnOrigin: configuration.mode == .development)))
        router.add(middleware: ErrorMiddleware(metrics: metrics))
        router.add(middleware: ClientAddressMiddleware(trustedProxies: configuration.trustedProxies))
        if configuration.mode == .production, !EnrollmentLink.isFollowable(server: configuration.publicURL) {
            logger.warning(
                "COUNTERSIGN_PUBLIC_URL is not https: phones will refuse the enrollment links this server issues (the SDK follows https only, or http on the loopback)")
        }
        if configuration.mode == .production, configuration.metricsToken == nil {
            logger.notice("GET /metrics is not served: set COUNTERSIGN_METRICS_TOKEN for a scraper to read the metrics")
        }
        let groups: [any RouteGroup] = [
            HealthRoutes(storage: storage, events: events),
            MetricsRoutes(
                metrics: metrics, openWaits: openWaits, token: configuration.metricsToken,
                servedWithoutToken: configuration.mode == .development),
            OrchestrationRoutes(service: interactions),
            ApprovalRoutes(
                mobileApprove: MobileApproveService(interactions: interactions, verifier: verifier, storage: storage, clock: clock),
                inbox: InboxService(storage: storage, verifier: verifier, events: events, openWaits: openWaits, clock: clock),
                approvalWaits: ApprovalWaitService(
                    interactions: interactions, events: events, storage: storage, openWaits: openWaits, clock: clock)),
            try BrowserRoutes(servingDemo: configuration.mode == .development),
            try ConsoleRoutes(sessions: consoleSessions),
            try OpenAPIRoutes(),
            try WellKnownRoutes(issuer: configuration.publicURL, tokenIssuer: tokenIssuer, detailTypes: detailTypes),
            CIBARoutes(ciba: CIBAService(
                storage: storage, authentication: ClientAuthentication(storage: storage, issuer: configuration.publicURL, clock: clock),
                approvals: approvals, tokenIssuer: tokenIssuer, secrets: secretBox, clock: clock, issuer: configuration.publicURL,
                metrics: metrics, detailTypes: detailTypes, journeys: journeys)),
            AdminRoutes(
                verifier: adminKeys, storage: storage, journeys: journeys, tokenIssuer: tokenIssuer, clock: clock,
                securityEvents: securityEvents, development: configuration.mode == .development, detailTypes: detailTypes),
            EvidenceRoutes(verifier: adminKeys, storage: storage, sealKeys: evidenceSealer.publicKeys),
            SecurityEventRoutes(verifier: adminKeys, storage: storage),
            ApprovalAdminRoutes(verifier: adminKeys, storage: storage),
            EnrollmentRoutes(verifier: adminKeys, storage: storage, codes: enrollmentCodes, securityEvents: securityEvents),
            OperatorRoutes(verifier: adminKeys, storage: storage, codes: enrollmentCodes, securityEvents: securityEvents, clock: clock),
            StatsRoutes(verifier: adminKeys, storage: storage, openWaits: openWaits, clock: clock),
            BackupRoutes(verifier: adminKeys, backups: DatabaseBackups(
                storage: storage, directory: configuration.backupDirectory, clock: clock, securityEvents: securityEvents)),
            PushAdminRoutes(
                verifier: adminKeys, storage: storage, secrets: secretBox, securityEvents: securityEvents, clock: clock, gateways: gateways),
        ]
        for group in groups { group.register(on: router) }
        return CountersignApp(
            responder: router.buildResponder(), routes: router.routes.map { "\($0.method.rawValue) \($0.path)" }, services: parts.services, logger: logger, configuration: configuration, storage: storage,
            sweeper: sweeper)
    }

    /// How waiters are woken: across instances through the PostgreSQL database they share, in-process on SQLite.
    private static func eventBus(for database: DatabaseLocation, storage: Storage, logger: Logger, parts: ServerParts) throws -> any EventBus {
        guard case .postgres(let url) = database else { return InProcessEventBus() }
        let bus = PostgresEventBus(configuration: try DatabaseSetup.postgresConfiguration(url), storage: storage, logger: logger)
        parts.add(bus)
        return bus
    }

    /// Connects the database, applies the schema versions it lacks (and removes the development
    /// mode's demo application when asked), and closes it.
    public static func prepareDatabase(location: DatabaseLocation, removingDemoApplication: Bool = false, logger: Logger) async throws {
        let runtime = DatabaseSetup.Runtime(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        let startupLock = try await DatabaseSetup.startupLock(for: location, on: runtime)
        do {
            let storage = try await DatabaseSetup.open(location, on: runtime)
            do {
                if removingDemoApplication { try await DevelopmentMode.removeDemoApplication(storage) }
            } catch {
                try? await storage.shutdown()
                throw error
            }
            try await storage.shutdown()
        } catch {
            await startupLock?.release()
            throw error
        }
        await startupLock?.release()
    }
}

/// The parts of the server with a life of their own, gathered as they are made: each becomes a service of
/// the running server, or, when the start fails part way, is shut down at once.
private final class ServerParts: Sendable {
    private let parts = Mutex<[any ServerLifecycle]>([])

    func add(_ part: any ServerLifecycle) {
        parts.withLock { $0.append(part) }
    }

    var services: [any Service] {
        parts.withLock { $0.map(LifecycleService.init) }
    }

    func shutdownAll() async {
        for part in parts.withLock({ $0 }).reversed() { await part.shutdown() }
    }
}

/// A part's life as a service: booted when the server starts, shut down when it stops. The service group
/// stops services in the reverse of their order, so each part outlives the ones added after it.
private struct LifecycleService: Service {
    let part: any ServerLifecycle

    func run() async throws {
        try part.didBoot()
        try? await gracefulShutdown()
        await part.shutdown()
    }
}

/// Closes the storage when the server stops.
private struct StorageLifetime: ServerLifecycle {
    let storage: Storage

    func shutdown() async {
        try? await storage.shutdown()
    }
}
