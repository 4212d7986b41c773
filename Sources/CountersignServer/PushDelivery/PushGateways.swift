import AsyncHTTPClient
import CountersignCore
import Foundation
import Push

/// The gateway of each push channel. APNs and FCM gateways are built from the stored provider
/// configurations and rebuilt by `refresh` when those change (on any instance); between changes they
/// are reused, so provider and access tokens stay cached.
actor PushGateways {
    private let configs: PushConfigStore
    private let secrets: SecretBox
    private let client: HTTPClient
    /// The inbox needs no configuration. New inbox pushes are rung at commit (`ApprovalLifecycle`); the
    /// queue sees inbox jobs only from instances of an older version.
    nonisolated let inbox: InboxPushGateway
    private let now: @Sendable () -> Date
    /// The seconds one push attempt may take; a request for a provider credential is given as long.
    private let attemptTimeLimit: TimeInterval
    private var built: (fingerprint: String, apns: APNsGateway, fcm: FCMGateway)?

    init(
        configs: PushConfigStore, secrets: SecretBox, client: HTTPClient, inbox: InboxPushGateway, attemptTimeLimit: TimeInterval,
        now: @escaping @Sendable () -> Date
    ) {
        self.configs = configs
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

    /// Rebuilds the gateways when a configuration was added, changed or removed since the last call: a
    /// light read of ids and update times, and the key material only when something changed. Opening
    /// every key, it fails on a wrong master key (so the server does not start with one).
    func refresh() async throws {
        let fingerprint = try await configs.version()
        if let built, built.fingerprint == fingerprint { return }
        let (apns, fcm) = try Self.open(try await configs.all(), with: secrets)
        built = (
            fingerprint, await APNsGateway(configurations: apns, client: client, now: now),
            await FCMGateway(accounts: fcm, client: client, tokenTimeLimit: attemptTimeLimit, now: now))
    }

    /// Decrypts and checks every configuration, sorted by provider.
    private static func open(_ configs: [PushConfigRecord], with secrets: SecretBox) throws -> ([APNsConfiguration], [FCMServiceAccount]) {
        var apns: [APNsConfiguration] = []
        var fcm: [FCMServiceAccount] = []
        for config in configs {
            switch try config.provider(opening: secrets) {
            case .apns(let configuration): apns.append(configuration)
            case .fcm(let account): fcm.append(account)
            }
        }
        return (apns, fcm)
    }

    private func current() async throws -> (fingerprint: String, apns: APNsGateway, fcm: FCMGateway) {
        if built == nil { try await refresh() }
        return built!
    }
}
