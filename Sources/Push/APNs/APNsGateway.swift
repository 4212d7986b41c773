import AsyncHTTPClient
import CountersignCore
import Foundation
import NIOCore

/// Apple Push Notification service over HTTP/2 with token authentication. Each configuration serves
/// the devices whose app has its bundle id; one provider token per configuration is reused across
/// sends and renewed every 50 minutes.
public struct APNsGateway: PushGateway {
    /// APNs refuses alert payloads larger than this.
    public static let maximumPayloadBytes = 4096

    private let client: HTTPClient
    private let senders: AppConfigurations<Sender>
    /// Each key's provider token, by `APNsConfiguration.credentialKey`.
    private let providerTokens: [String: APNsProviderToken]

    struct Sender: Sendable {
        let configuration: APNsConfiguration
        let providerToken: APNsProviderToken
    }

    /// `client` must allow HTTP/2 (`httpVersion = .automatic`, the default); `now` is the clock provider
    /// tokens are dated with. A gateway built again after a configuration changed takes over `previous`'s
    /// provider tokens for the keys that did not change: Apple throttles a key's token renewed more often
    /// than every 20 minutes. `withheld` are the bundle ids of configurations that could not be opened:
    /// their devices are refused, not sent through another configuration.
    public init(
        configurations: [APNsConfiguration], withholding withheld: Set<String> = [], client: HTTPClient,
        now: @escaping @Sendable () -> Date = Date.init, reusing previous: APNsGateway? = nil
    ) async {
        var senders: [Sender] = []
        var tokens: [String: APNsProviderToken] = [:]
        for configuration in configurations {
            let key = configuration.credentialKey
            let token = if let kept = tokens[key] ?? previous?.providerTokens[key] { kept } else {
                await APNsProviderToken(configuration: configuration, now: now)
            }
            tokens[key] = token
            senders.append(Sender(configuration: configuration, providerToken: token))
        }
        self.client = client
        self.senders = AppConfigurations(senders, withholding: withheld) { $0.configuration.bundleID }
        providerTokens = tokens
    }

    public func send(_ notification: PushNotification, to target: PushTarget) async -> DeliveryOutcome {
        guard let deviceToken = target.token, Self.isDeviceToken(deviceToken) else {
            return .tokenInvalid(reason: "BadDeviceToken")
        }
        guard let sender = senders.serving(target.appID) else {
            return .rejected(reason: "no APNs configuration for bundle id '\(target.appID ?? "")'")
        }
        let body: Data
        do {
            body = try JSONEncoder.sortedKeys.encode(Self.payload(of: notification))
        } catch {
            return .rejected(reason: "the payload cannot be encoded")
        }
        guard body.count <= Self.maximumPayloadBytes else {
            return .rejected(reason: "PayloadTooLarge: \(body.count) bytes, APNs takes at most \(Self.maximumPayloadBytes)")
        }
        // A provider token Apple calls expired (e.g. after a clock jump) is renewed once.
        return await attemptRenewingOnce({ await attempt(body, notification, deviceToken, sender) }, cache: sender.providerToken.cache)
    }

    private func attempt(_ body: Data, _ notification: PushNotification, _ deviceToken: String, _ sender: Sender) async -> CredentialedAttempt {
        let configuration = sender.configuration
        var request = HTTPClientRequest(url: "\(configuration.baseURL)/3/device/\(deviceToken)")
        request.method = .POST
        let providerToken: String
        do {
            providerToken = try await sender.providerToken.cache.value()
        } catch {
            return .done(.rejected(reason: "the provider token cannot be signed"))
        }
        request.headers.add(name: "authorization", value: "bearer \(providerToken)")
        request.headers.add(name: "apns-topic", value: configuration.bundleID)
        request.headers.add(name: "apns-push-type", value: "alert")
        request.headers.add(name: "apns-priority", value: "10")
        request.headers.add(name: "apns-expiration", value: String(Int(notification.expiresAt.timeIntervalSince1970)))
        request.headers.add(name: "apns-collapse-id", value: notification.collapseID)
        request.headers.add(name: "apns-id", value: UUID().uuidString)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let reply = try await ProviderReply.exchange(request, with: client, trust: configuration.trust)
            let reason = (try? JSONDecoder().decode(Reply.self, from: reply.body))?.reason ?? "HTTP \(reply.status)"
            switch (reply.status, reason) {
            case (200, _): return .done(.delivered)
            case (403, "ExpiredProviderToken"), (403, "InvalidProviderToken"): return .credentialRefused(reason, credential: providerToken)
            case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"): return .done(.tokenInvalid(reason: reason))
            case (429, _), (500...599, _): return .done(.retryable(reason: reason, retryAfter: reply.retryAfter))
            default: return .done(.rejected(reason: reason))
            }
        } catch {
            return .done(.retryable(reason: "network: \(error)", retryAfter: nil))
        }
    }

    /// `aps` with the visible alert, and `data` with what the app hands to the SDK.
    static func payload(of notification: PushNotification) -> JSONValue {
        [
            "aps": ["alert": ["title": .string(notification.title), "body": .string(notification.body)], "sound": "default"],
            "data": .object(notification.payload.mapValues { .string($0) }),
        ]
    }

    /// APNs device tokens are hex strings (64 characters today; Apple allows longer).
    static func isDeviceToken(_ text: String) -> Bool {
        text.count >= 64 && text.count <= 200 && text.count % 2 == 0 && text.allSatisfy(\.isHexDigit)
    }

    private struct Reply: Decodable {
        let reason: String?
    }
}

extension JSONEncoder {
    /// Stable output for request bodies.
    static let sortedKeys: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
