import CountersignCore
import Fluent
import FluentSQL
import Foundation
import Vapor

/// Assembles the server: database, migrations, journeys, token keys, admin key and routes.
///
/// ```swift
/// let app = try await Application.make(.production)
/// try await CountersignApp.configure(app, configuration: try Configuration.load(environment: ProcessInfo.processInfo.environment))
/// try await app.execute()
/// ```
public enum CountersignApp {
    /// Collaborators the server takes from outside, replaceable in tests.
    public struct Dependencies: Sendable {
        public var clock: any WallClock
        /// Shows a newly generated admin key to the operator (once, at first start).
        public var announceAdminKey: @Sendable (String) -> Void

        public init(clock: any WallClock = SystemClock(), announceAdminKey: @escaping @Sendable (String) -> Void = { _ in }) {
            self.clock = clock
            self.announceAdminKey = announceAdminKey
        }
    }

    public static func configure(
        _ app: Application, configuration: Configuration, dependencies: Dependencies = Dependencies()
    ) async throws {
        // Below info, the HTTP layer logs raw request headers (bearer tokens) and the database layer logs
        // the values of every query (interaction state with web OTPs, token signing keys): never log below info.
        if app.logger.logLevel < .info { app.logger.logLevel = .info }
        app.http.server.configuration.hostname = configuration.hostname
        app.http.server.configuration.port = configuration.port
        // A connection silent for this long is closed (an event stream writes a keep-alive every 15 s).
        app.http.server.configuration.idleTimeout = .milliseconds(Int64(configuration.idleTimeout * 1000))
        // The server counts its requests itself (`ServerMetrics`); Vapor's own count would go to the
        // process-wide metrics system, which nothing reads, at a cost in every request.
        app.http.server.configuration.reportMetrics = false
        // No body of the API is compressed: a compressed one reaches the strict input check as it came,
        // which refuses it (415), rather than being inflated first.
        app.http.server.configuration.requestDecompression = .disabled
        let metrics = ServerMetrics()
        // Held until the start has settled the database's first secrets (below); managed, so that a start
        // failing before then lets it go too.
        let startupLock = try await DatabaseSetup.startupLock(for: configuration.database, on: app.databaseRuntime)
        if let startupLock { app.manage(startupLock) }
        let storage = try await DatabaseSetup.open(configuration.database, on: app.databaseRuntime, metrics: metrics)
        // Registered first, so it closes last: after the background services that use it have stopped.
        app.manage(StorageLifetime(storage: storage))
        app.countersignStorage = storage
        let clock = dependencies.clock

        switch configuration.mode {
        case .development: try await DevelopmentMode.prepare(storage, clock: clock, logger: app.logger)
        case .production: try await DevelopmentMode.refuseDemoApplication(storage)
        }
        let journeys = try JourneyRegistry.load(
            directory: configuration.journeysDirectory, development: configuration.mode == .development)
        let secretBox = try SecretBox.load(configuration.masterKey)
        let tokenIssuer = try await TokenIssuer.bootstrap(
            keyVault: SigningKeyVault(storage: storage, secrets: secretBox), issuer: configuration.publicURL,
            lifetime: configuration.tokenLifetime, clock: clock)
        let securityEvents = SecurityEvents(storage: storage, clock: clock, logger: app.logger)
        let adminKeys = try await AdminKeyVerifier.bootstrap(
            configuredKey: configuration.adminKey, failuresPerMinute: configuration.adminFailuresPerMinute, storage: storage, clock: clock, securityEvents: securityEvents,
            announce: dependencies.announceAdminKey)
        let events = try eventBus(for: configuration.database, storage: storage, app: app)
        let pushClient = PushHTTPClient()
        // Registered at once, so the client is closed even when start-up fails below. Shutdown runs in
        // reverse: the sender stops before its client closes.
        app.manage(pushClient)
        let gateways = PushGateways(
            configs: storage.pushConfigs, secrets: secretBox, client: pushClient.client, inbox: InboxPushGateway(events: events),
            attemptTimeLimit: configuration.pushAttemptTimeLimit, logger: app.logger, now: { clock.now() })
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
            attemptTimeLimit: configuration.pushAttemptTimeLimit, metrics: metrics, logger: app.logger)
        app.manage(pushSender)
        app.manage(ExpirySweeper(
            storage: storage, clock: clock, retention: configuration.recordRetention,
            securityEventRetention: configuration.securityEventRetention, interval: configuration.sweepInterval, logger: app.logger))
        let evidenceSealer = try await EvidenceSealer(secrets: secretBox, issuer: configuration.publicURL, clock: clock)
        let services = JourneyServices(
            storage: storage, tokenIssuer: tokenIssuer, evidenceSealer: evidenceSealer, clock: clock, approvals: approvals,
            enrollmentCodes: enrollmentCodes)
        let interactions = InteractionService(
            services: services, journeys: journeys, interactionLifetime: configuration.interactionLifetime, secrets: secretBox,
            startLimiter: StartRateLimiter(
                perClient: configuration.startRatePerClient, perAddress: configuration.startRatePerAddress, clock: clock, securityEvents: securityEvents),
            metrics: metrics)
        let openWaits = OpenWaits(total: configuration.maximumOpenWaits)
        let verifier = DeviceSignatureVerifier(storage: storage, clock: clock, securityEvents: securityEvents)

        app.publicOrigin = WebOrigin.of(url: configuration.publicURL)
        app.hostIsOwnOrigin = configuration.mode == .development
        app.middleware = Middlewares()
        app.middleware.use(RequestLogMiddleware(metrics: metrics))
        app.middleware.use(ApplicationCORSMiddleware(storage: storage))
        app.middleware.use(ErrorMiddleware(metrics: metrics))
        app.middleware.use(ClientAddressMiddleware(trustedProxies: configuration.trustedProxies))
        try app.register(collection: HealthRoutes(storage: storage, events: events))
        try app.register(collection: MetricsRoutes(
            metrics: metrics, openWaits: openWaits, token: configuration.metricsToken,
            servedWithoutToken: configuration.mode == .development))
        if configuration.mode == .production, !EnrollmentLink.isFollowable(server: configuration.publicURL) {
            app.logger.warning(
                "COUNTERSIGN_PUBLIC_URL is not https: phones will refuse the enrollment links this server issues (the SDK follows https only, or http on the loopback)")
        }
        if configuration.mode == .production, configuration.metricsToken == nil {
            app.logger.notice("GET /metrics is not served: set COUNTERSIGN_METRICS_TOKEN for a scraper to read the metrics")
        }
        try app.register(collection: OrchestrationRoutes(service: interactions))
        try app.register(collection: ApprovalRoutes(
            mobileApprove: MobileApproveService(interactions: interactions, verifier: verifier, storage: storage, clock: clock),
            interactions: interactions, verifier: verifier, events: events, storage: storage, openWaits: openWaits, clock: clock))
        try app.register(collection: try BrowserRoutes(servingDemo: configuration.mode == .development))
        try app.register(collection: try OpenAPIRoutes())
        try app.register(collection: try WellKnownRoutes(issuer: configuration.publicURL, tokenIssuer: tokenIssuer))
        try app.register(collection: AdminRoutes(
            verifier: adminKeys, storage: storage, journeys: journeys, tokenIssuer: tokenIssuer, clock: clock,
            securityEvents: securityEvents))
        try app.register(collection: EvidenceRoutes(verifier: adminKeys, storage: storage, sealKeys: evidenceSealer.publicKeys))
        try app.register(collection: SecurityEventRoutes(verifier: adminKeys, storage: storage))
        try app.register(collection: EnrollmentRoutes(verifier: adminKeys, storage: storage, codes: enrollmentCodes, securityEvents: securityEvents))
        try app.register(collection: StatsRoutes(verifier: adminKeys, storage: storage, openWaits: openWaits, clock: clock))
        try app.register(collection: BackupRoutes(verifier: adminKeys, backups: DatabaseBackups(
            storage: storage, directory: configuration.backupDirectory, clock: clock, securityEvents: securityEvents)))
        try app.register(collection: PushAdminRoutes(
            verifier: adminKeys, storage: storage, secrets: secretBox, securityEvents: securityEvents, clock: clock))
    }

    /// How waiters are woken: across instances through the PostgreSQL database they share, in-process on SQLite.
    private static func eventBus(for database: DatabaseLocation, storage: Storage, app: Application) throws -> any EventBus {
        guard case .postgres(let url) = database else { return InProcessEventBus() }
        let bus = PostgresEventBus(configuration: try DatabaseSetup.postgresConfiguration(url).coreConfiguration, storage: storage, logger: app.logger)
        app.manage(bus)
        return bus
    }

    /// Connects the database, applies any migrations that have not run (and removes the development
    /// mode's demo application when asked), and closes it.
    public static func prepareDatabase(_ app: Application, location: DatabaseLocation, removingDemoApplication: Bool = false) async throws {
        let startupLock = try await DatabaseSetup.startupLock(for: location, on: app.databaseRuntime)
        do {
            let storage = try await DatabaseSetup.open(location, on: app.databaseRuntime)
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

extension Application {
    private struct StorageKey: Vapor.StorageKey {
        typealias Value = CountersignServer.Storage
    }

    /// The server's storage, once `CountersignApp.configure` has opened it.
    var countersignStorage: CountersignServer.Storage? {
        get { storage[StorageKey.self] }
        set { storage[StorageKey.self] = newValue }
    }

    /// The server's database as SQL, for tools and tests that look inside it.
    public var countersignSQL: (any SQLDatabase)? { countersignStorage?.sql }

    /// What opening the database borrows from this application.
    fileprivate var databaseRuntime: DatabaseSetup.Runtime {
        DatabaseSetup.Runtime(threadPool: threadPool, eventLoopGroup: eventLoopGroup, logger: logger)
    }

    /// Boots and shuts `part` down with this application.
    fileprivate func manage(_ part: any ServerLifecycle) {
        lifecycle.use(VaporLifecycle(part: part))
    }
}

/// A part's life as Vapor's lifecycle calls it.
private struct VaporLifecycle: LifecycleHandler {
    let part: any ServerLifecycle

    func didBoot(_ application: Application) throws {
        try part.didBoot()
    }

    func shutdownAsync(_ application: Application) async {
        await part.shutdown()
    }
}

/// Closes the storage when the application stops.
private struct StorageLifetime: ServerLifecycle {
    let storage: CountersignServer.Storage

    func shutdown() async {
        try? await storage.shutdown()
    }
}
