import CountersignCore
import Foundation

/// Delivers an approval request to a phone. One implementation per channel (APNs, FCM, inbox); the
/// server picks the one that matches the device's registration.
public protocol PushGateway: Sendable {
    /// Makes one attempt to send `notification` to the device described by `target`. Never throws:
    /// every failure is an outcome the caller can act on.
    func send(_ notification: PushNotification, to target: PushTarget) async -> DeliveryOutcome
}

/// How one delivery attempt ended.
public enum DeliveryOutcome: Sendable, Equatable {
    case delivered
    /// Worth another try later (busy or failing provider, network trouble); `retryAfter` is the
    /// provider's own `Retry-After`, when it sent one.
    case retryable(reason: String, retryAfter: TimeInterval?)
    /// The provider says the device's token is no longer valid; retrying cannot help.
    case tokenInvalid(reason: String)
    /// Refused for good (bad request, payload too large, no configuration); retrying cannot help.
    case rejected(reason: String)
}

/// Where a notification goes.
public struct PushTarget: Sendable, Equatable {
    public let deviceID: String
    public let channel: PushChannel
    /// The provider's device token (APNs hex token, FCM registration token); nil for the inbox.
    public let token: String?
    /// The app the token belongs to (the APNs bundle id), when the provider needs it.
    public let appID: String?

    public init(deviceID: String, channel: PushChannel, token: String?, appID: String?) {
        self.deviceID = deviceID
        self.channel = channel
        self.token = token
        self.appID = appID
    }
}

/// What a phone receives: a short visible text and the payload it hands to the SDK unchanged.
public struct PushNotification: Sendable, Equatable {
    public let title: String
    public let body: String
    /// String values only, no personal data: at least `approval_id`, `client_id`, `expires_at`, `application`.
    public let payload: [String: String]
    /// When the provider may stop trying to deliver.
    public let expiresAt: Date
    /// Notifications with the same id replace each other on the device.
    public let collapseID: String

    public init(title: String, body: String, payload: [String: String], expiresAt: Date, collapseID: String) {
        self.title = title
        self.body = body
        self.payload = payload
        self.expiresAt = expiresAt
        self.collapseID = collapseID
    }
}
