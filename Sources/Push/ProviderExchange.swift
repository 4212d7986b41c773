import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL

/// A provider's answer to one request, read the same way for APNs and FCM.
struct ProviderReply {
    let status: UInt
    let body: Data
    /// The provider's `Retry-After`, in seconds.
    let retryAfter: TimeInterval?

    /// Sends `request`, trusting `trust` instead of the system's roots when given, and reads the answer
    /// (bodies are small: at most 64 KiB are read). The whole exchange, the answer's body included, ends
    /// within `timeLimit` seconds: a provider that sends its headers and then stalls holds nothing up.
    static func exchange(
        _ request: HTTPClientRequest, with client: HTTPClient, trust: TLSConfiguration?, timeLimit: TimeInterval = 15
    ) async throws -> ProviderReply {
        var request = request
        if let trust { request.tlsConfiguration = trust }
        let sent = request
        return try await withThrowingTaskGroup(of: ProviderReply?.self) { group in
            group.addTask {
                let response = try await client.execute(sent, deadline: .now() + .milliseconds(Int64(timeLimit * 1000)))
                let body = try await response.body.collect(upTo: 64 * 1024)
                return ProviderReply(
                    status: response.status.code, body: Data(body.readableBytesView),
                    retryAfter: response.headers.first(name: "retry-after").flatMap(TimeInterval.init))
            }
            group.addTask {
                try await Task.sleep(for: .milliseconds(Int64(timeLimit * 1000)))
                return nil
            }
            defer { group.cancelAll() }
            guard let reply = try await group.next() ?? nil else { throw NoAnswer(timeLimit: timeLimit) }
            return reply
        }
    }

    /// The provider's answer did not arrive whole within the exchange's time limit.
    struct NoAnswer: Error, CustomStringConvertible {
        let timeLimit: TimeInterval
        var description: String { "no whole answer within \(String(format: "%g", timeLimit)) s" }
    }
}

/// How one attempt with a cached provider credential (APNs provider token, FCM access token) ended.
enum CredentialedAttempt {
    case done(DeliveryOutcome)
    /// The provider refused the credential itself: the reason it gave, and the credential it refused.
    case credentialRefused(String, credential: String)
}

/// Runs `attempt`; when the provider refused the cached credential, it is dropped from `cache` and the
/// attempt runs once more. A second refusal is final.
func attemptRenewingOnce(_ attempt: () async -> CredentialedAttempt, cache: CachedCredential) async -> DeliveryOutcome {
    switch await attempt() {
    case .done(let outcome): return outcome
    case .credentialRefused(_, let refused): await cache.invalidate(refused)
    }
    switch await attempt() {
    case .done(let outcome): return outcome
    case .credentialRefused(let reason, _): return .rejected(reason: reason)
    }
}
