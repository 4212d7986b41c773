import CountersignCore
import Push

/// Apple's push service: a `.p8` signing key (`private_key_pem`) with its key id and team id, for one
/// bundle id, in the production or sandbox environment. Stored as: `app_id` the bundle id, `issuer` the
/// team id, `environment` as given.
struct APNsProvider: PushProviderKind {
    var name: String { "apns" }
    var channel: PushChannel { .apns }

    func apply(_ body: PushConfigRequest, to config: inout PushConfigRecord, _ fields: inout GivenFields, storedSecret: String) -> String {
        config.appID = fields.required(body.bundleID, stored: config.appID, "bundle_id")
        config.keyID = fields.required(body.keyID, stored: config.keyID, "key_id")
        config.issuer = fields.required(body.teamID, stored: config.issuer, "team_id")
        config.environment = fields.required(body.environment, stored: config.environment, "environment")
        return fields.required(body.privateKeyPEM, stored: storedSecret, "private_key_pem")
    }

    func open(_ config: PushConfigRecord, secret: String) throws(InvalidPushConfig) -> any Sendable {
        guard let environment = APNsConfiguration.Environment(rawValue: config.environment) else {
            throw InvalidPushConfig(message: "environment must be production or sandbox")
        }
        do {
            return try APNsConfiguration(
                keyPEM: secret, keyID: config.keyID, teamID: config.issuer, bundleID: config.appID, environment: environment,
                baseURL: config.endpoint, caCertificatePEM: config.caCertificatePEM)
        } catch {
            throw InvalidPushConfig(message: "\(error.field) \(error.reason)")
        }
    }

    func show(_ config: PushConfigRecord, in view: inout PushConfigView) {
        view.bundleID = config.appID
        view.teamID = config.issuer
        view.environment = config.environment
    }

    func gateway(
        _ opened: [any Sendable], withholding withheld: Set<String>, _ context: PushGatewayContext, reusing previous: (any PushGateway)?
    ) async -> any PushGateway {
        await APNsGateway(
            configurations: opened.compactMap { $0 as? APNsConfiguration }, withholding: withheld, client: context.client,
            now: context.now, reusing: previous as? APNsGateway)
    }
}
