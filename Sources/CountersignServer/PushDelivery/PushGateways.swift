import AsyncHTTPClient
import CountersignCore
import Foundation
import Logging
import Push

/// The gateway of each push channel. APNs and FCM gateways are built from the stored provider
/// configurations and rebuilt by `refresh` when those change (on any instance); between changes they
/// are reused, and across a rebuild each unchanged key keeps its provider or access token.
actor PushGateways {
    private let configs: PushConfigStore
    private let secrets: SecretBox
    private let client: HTTPClient
    /// The inbox needs no configuration. Its pushes are rung at commit (`ApprovalLifecycle`) and saved as
    /// sent (`QueuedPush`), so the queue hands it none.
    nonisolated let inbox: InboxPushGateway
    private let now: @Sendable () -> Date
    /// The seconds one push attempt may take; a request for a provider credential is given as long.
    private let attemptTimeLimit: TimeInterval
    private let logger: Logger
    private var built: (fingerprint: String, apns: APNsGateway, fcm: FCMGateway)?

    init(
        configs: PushConfigStore, secrets: SecretBox, client: HTTPClient, inbox: InboxPushGateway, attemptTimeLimit: TimeInterval,
        logger: Logger, now: @escaping @Sendable () -> Date
    ) {
        self.configs = configs
        self.logger = logger
        self.attemptTimeLimit = attemptTimeLimit
        self.secrets = secrets
        self.client = client
        self.inbox = inbox
        self.now = now
    }

    /// The gateway for `channel` as of the last `refresh`.
    func gateway(for channel: PushChannel) async throws -> any PushGateway {
        switch channel {
        case .inbox: return inbox
        case .apns: return try await current().apns
        case .fcm: return try await current().fcm
        }
    }

    /// Builds the gateways at start, opening every configuration: a key that does not open (a wrong
    /// master key) stops the server here rather than failing its first push.
    func openAll() async throws {
        try await refresh { _, error in throw error }
    }

    /// Rebuilds the gateways when a configuration was added, changed or removed since the last call: a
    /// light read of ids and sealed keys, and the keys opened only when something changed. A configuration
    /// that does not open (written under another master key, or damaged) is logged and left out, so the
    /// others go on serving; pushes for its app are refused as for an app with no configuration.
    func refresh() async throws {
        try await refresh { config, error in
            logger.error("a push configuration cannot be opened and serves no push", metadata: [
                "push_config_id": "\(config.id)", "provider": "\(config.provider)", "error": "\(error)",
            ])
        }
    }

    private func refresh(unopened: (PushConfigRecord, any Error) throws -> Void) async throws {
        let fingerprint = try await configs.version()
        if let built, built.fingerprint == fingerprint { return }
        var apns: [APNsConfiguration] = []
        var fcm: [FCMServiceAccount] = []
        var withheld: [String: Set<String>] = [:]
        for config in try await configs.all() {
            do {
                switch try config.provider(opening: secrets) {
                case .apns(let configuration): apns.append(configuration)
                case .fcm(let account): fcm.append(account)
                }
            } catch {
                try unopened(config, error)
                withheld[config.provider, default: []].insert(config.appID)
            }
        }
        // Provider and access tokens of keys that did not change are kept: a rename is no new key.
        built = (
            fingerprint,
            await APNsGateway(
                configurations: apns, withholding: withheld[APNsProvider().name] ?? [], client: client, now: now, reusing: built?.apns),
            await FCMGateway(
                accounts: fcm, withholding: withheld[FCMProvider().name] ?? [], client: client, tokenTimeLimit: attemptTimeLimit,
                now: now, reusing: built?.fcm))
    }

    private func current() async throws -> (fingerprint: String, apns: APNsGateway, fcm: FCMGateway) {
        if built == nil { try await refresh() }
        return built!
    }
}
