import CountersignCore
import Foundation
import Push

/// Firebase Cloud Messaging: a service account's JSON key file (`service_account`), for its project or
/// the one `project_id` names. Stored as: `app_id` the project id, `key_id` the service account's private
/// key id, `issuer` its client email, all read from the key file.
struct FCMProvider: PushProviderKind {
    var name: String { "fcm" }
    var channel: PushChannel { .fcm }

    func apply(_ body: PushConfigRequest, to config: inout PushConfigRecord, _ fields: inout GivenFields, storedSecret: String) throws
        -> String
    {
        let secret = fields.required(try body.serviceAccountText(), stored: storedSecret, "service_account")
        // Project, key id and client email are read from the service account when it is opened.
        config.appID = body.projectID ?? (fields.isNew || body.serviceAccount != nil ? "" : config.appID)
        config.keyID = ""
        config.issuer = ""
        config.environment = ""
        return secret
    }

    func open(_ config: PushConfigRecord, secret: String) throws(InvalidPushConfig) -> any Sendable {
        do {
            return try FCMServiceAccount(
                json: Data(secret.utf8), projectID: config.appID.isEmpty ? nil : config.appID,
                sendBaseURL: config.endpoint ?? FCMServiceAccount.defaultSendBaseURL, tokenEndpoint: config.tokenEndpoint,
                caCertificatePEM: config.caCertificatePEM)
        } catch {
            throw InvalidPushConfig(message: "service_account: \(error.reason)")
        }
    }

    func adopt(_ opened: any Sendable, into config: inout PushConfigRecord) {
        guard let account = opened as? FCMServiceAccount else { return }
        config.appID = account.projectID
        config.keyID = account.privateKeyID
        config.issuer = account.clientEmail
    }

    func show(_ config: PushConfigRecord, in view: inout PushConfigView) {
        view.projectID = config.appID
        view.clientEmail = config.issuer
    }

    func gateway(
        _ opened: [any Sendable], withholding withheld: Set<String>, _ context: PushGatewayContext, reusing previous: (any PushGateway)?
    ) async -> any PushGateway {
        await FCMGateway(
            accounts: opened.compactMap { $0 as? FCMServiceAccount }, withholding: withheld, client: context.client,
            tokenTimeLimit: context.attemptTimeLimit, now: context.now, reusing: previous as? FCMGateway)
    }
}
