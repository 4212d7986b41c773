import Fluent
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
        try await prepareDatabase(app, location: configuration.database)

        let journeys = try JourneyRegistry.load(directory: configuration.journeysDirectory)
        let tokenIssuer = try await TokenIssuer.bootstrap(
            database: app.db, issuer: configuration.publicURL, lifetime: configuration.tokenLifetime, clock: dependencies.clock)
        let adminKeys = try await AdminKeyVerifier.bootstrap(
            configuredKey: configuration.adminKey, database: app.db, clock: dependencies.clock, announce: dependencies.announceAdminKey)
        let events = InProcessEventBus()
        let secretBox = try SecretBox.load(configuration.masterKey)
        let pushClient = PushHTTPClient()
        // Registered at once, so the client is closed even when start-up fails below. Shutdown runs in
        // reverse: the sender stops before its client closes.
        app.lifecycle.use(pushClient)
        let clock = dependencies.clock
        let gateways = PushGateways(
            configs: try app.db.storage.pushConfigs, secrets: secretBox, client: pushClient.client, inbox: InboxPushGateway(events: events),
            now: { clock.now() })
        // Opens every stored key: a wrong master key stops the server here rather than failing its first push.
        try await gateways.refresh()
        let approvals = ApprovalLifecycle(
            database: app.db, clock: clock, otpKey: try await ServerSecrets.otpKey(on: app.db), events: events, inbox: gateways.inbox)
        let pushSender = PushSender(
            database: app.db, gateways: gateways, clock: clock, events: events, approvals: approvals, retryPolicy: PushRetryPolicy(),
            logger: app.logger)
        app.lifecycle.use(pushSender)
        app.lifecycle.use(ExpirySweeper(
            database: app.db, clock: clock, retention: configuration.recordRetention, interval: configuration.sweepInterval,
            logger: app.logger))
        let services = JourneyServices(database: app.db, tokenIssuer: tokenIssuer, clock: clock, approvals: approvals)
        let interactions = InteractionService(
            services: services, journeys: journeys, interactionLifetime: configuration.interactionLifetime)
        let verifier = DeviceSignatureVerifier(database: app.db, clock: dependencies.clock)

        app.middleware = Middlewares()
        app.middleware.use(RouteLoggingMiddleware(logLevel: .info))
        app.middleware.use(ErrorMiddleware())
        app.get("healthz") { _ in ["status": "ok"] }
        try app.register(collection: OrchestrationRoutes(service: interactions))
        try app.register(collection: ApprovalRoutes(
            mobileApprove: MobileApproveService(interactions: interactions, verifier: verifier),
            interactions: interactions, verifier: verifier, events: events))
        try app.register(collection: try BrowserRoutes())
        try app.register(collection: try WellKnownRoutes(issuer: configuration.publicURL, tokenIssuer: tokenIssuer))
        try app.register(collection: AdminRoutes(verifier: adminKeys, journeys: journeys, tokenIssuer: tokenIssuer, clock: dependencies.clock))
        try app.register(collection: EvidenceRoutes(verifier: adminKeys))
        try app.register(collection: StatsRoutes(verifier: adminKeys, clock: clock))
        try app.register(collection: PushAdminRoutes(verifier: adminKeys, secrets: secretBox, clock: clock))
    }

    /// Connects the database and applies any migrations that have not run.
    public static func prepareDatabase(_ app: Application, location: DatabaseLocation) async throws {
        try await DatabaseSetup.prepare(app, location: location)
    }
}
