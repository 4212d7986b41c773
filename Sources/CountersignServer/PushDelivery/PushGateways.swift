import AsyncHTTPClient
import CountersignCore
import Foundation
import Logging
import Push

/// The gateway of each push channel. Each provider's gateway (`PushProviders.all`) is built from the
/// stored configurations and rebuilt by `refresh` when those change (on any instance); between changes
/// it is reused, and across a rebuild each unchanged key keeps its provider or access token.
actor PushGateways {
    private let configs: PushConfigStore
    private let secrets: SecretBox
    /// The inbox needs no configuration. Its pushes are rung at commit (`ApprovalLifecycle`) and saved as
    /// sent (`QueuedPush`), so the queue hands it none.
    nonisolated let inbox: InboxPushGateway
    private let context: PushGatewayContext
    private let logger: Logger
    private var built: (fingerprint: String, gateways: [PushChannel: any PushGateway])?

    init(
        configs: PushConfigStore, secrets: SecretBox, client: HTTPClient, inbox: InboxPushGateway, attemptTimeLimit: TimeInterval,
        logger: Logger, now: @escaping @Sendable () -> Date
    ) {
        self.configs = configs
        self.logger = logger
        self.secrets = secrets
        self.inbox = inbox
        context = PushGatewayContext(client: client, attemptTimeLimit: attemptTimeLimit, now: now)
    }

    /// The gateway for `channel` as of the last `refresh`.
    func gateway(for channel: PushChannel) async throws -> any PushGateway {
        if channel == .inbox { return inbox }
        if built == nil { try await refresh() }
        guard let gateway = built?.gateways[channel] else { throw NoPushProvider(channel: channel) }
        return gateway
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
        var opened: [String: [any Sendable]] = [:]
        var withheld: [String: Set<String>] = [:]
        for config in try await configs.all() {
            do {
                let (provider, configuration) = try config.opened(with: secrets)
                opened[provider.name, default: []].append(configuration)
            } catch {
                try unopened(config, error)
                withheld[config.provider, default: []].insert(config.appID)
            }
        }
        // Provider and access tokens of keys that did not change are kept: a rename is no new key.
        var gateways: [PushChannel: any PushGateway] = [:]
        for provider in PushProviders.all {
            gateways[provider.channel] = await provider.gateway(
                opened[provider.name] ?? [], withholding: withheld[provider.name] ?? [], context,
                reusing: built?.gateways[provider.channel])
        }
        built = (fingerprint, gateways)
    }
}

/// A device's push channel that no provider serves.
struct NoPushProvider: Error, CustomStringConvertible {
    let channel: PushChannel
    var description: String { "no push provider serves the channel \(channel.rawValue)" }
}
