import AsyncHTTPClient
import CountersignCore
import Foundation
import Push

/// One push provider as the server knows it: how the admin API's fields fill a configuration, how a
/// configuration is checked and opened, how the admin API shows it, and the gateway (in the `Push`
/// module) its opened configurations make. Each provider is a file of this folder; `PushProviders.all`
/// lists them, and nothing else names one.
protocol PushProviderKind: Sendable {
    /// The name stored, and the admin API's `type`.
    var name: String { get }
    /// The push channel of the devices its gateway serves.
    var channel: PushChannel { get }
    /// Fills the provider's fields of `config` from `body` (`fields` keeps a stored value the body does not
    /// give, and notes a required one missing); returns the key material, given or `storedSecret`.
    func apply(_ body: PushConfigRequest, to config: inout PushConfigRecord, _ fields: inout GivenFields, storedSecret: String) throws
        -> String
    /// Checks `config` with its key material and opens it, as the gateway will use them.
    func open(_ config: PushConfigRecord, secret: String) throws(InvalidPushConfig) -> any Sendable
    /// Fills in `config` what the opened key material says (FCM: the project, key id and client email).
    func adopt(_ opened: any Sendable, into config: inout PushConfigRecord)
    /// The provider's own fields as the admin API shows them.
    func show(_ config: PushConfigRecord, in view: inout PushConfigView)
    /// The gateway for the configurations `opened` (as `open` made them), refusing the devices of the apps
    /// in `withheld` (configurations that could not be opened); `previous`, this provider's gateway
    /// before, hands on the credentials of keys that did not change.
    func gateway(
        _ opened: [any Sendable], withholding withheld: Set<String>, _ context: PushGatewayContext, reusing previous: (any PushGateway)?
    ) async -> any PushGateway
}

extension PushProviderKind {
    func adopt(_ opened: any Sendable, into config: inout PushConfigRecord) {}
}

/// What every provider's gateway is built with.
struct PushGatewayContext: Sendable {
    let client: HTTPClient
    /// The seconds one push attempt may take; a request for a provider credential is given as long.
    let attemptTimeLimit: TimeInterval
    let now: @Sendable () -> Date
}

/// The providers, written once: a configuration of any other type is refused.
enum PushProviders {
    static let all: [any PushProviderKind] = [APNsProvider(), FCMProvider()]

    /// The provider named `name`, as stored or as the admin API's `type` gives it.
    static func named(_ name: String) -> (any PushProviderKind)? {
        all.first { $0.name == name }
    }

    /// The names, for a refusal: `apns or fcm`.
    static var names: String {
        all.map(\.name).joined(separator: " or ")
    }
}

/// Why a provider configuration cannot be used, in words for the admin.
struct InvalidPushConfig: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// The fields a create or update gives, over the stored ones when updating; the missing ones noted.
struct GivenFields {
    let isNew: Bool
    private(set) var missing: [String] = []

    init(isNew: Bool) {
        self.isNew = isNew
    }

    /// `value`, else the stored one when updating; a missing or empty one is noted under `field`.
    mutating func required(_ value: String?, stored: @autoclosure () -> String, _ field: String) -> String {
        guard let value = value ?? (isNew ? nil : stored()), !value.isEmpty else {
            missing.append(field)
            return ""
        }
        return value
    }
}

extension PushConfigRecord {
    /// Decrypts the key material and opens the configuration with it, for its provider's gateway.
    func opened(with secrets: SecretBox) throws -> (provider: any PushProviderKind, opened: any Sendable) {
        guard let kind = PushProviders.named(provider) else { throw InvalidPushConfig(message: "type must be \(PushProviders.names)") }
        return (kind, try kind.open(self, secret: try secrets.open(sealedSecret, boundTo: id)))
    }
}
