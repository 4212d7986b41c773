import AsyncHTTPClient
import CountersignCore
import Foundation
import NIOCore

/// Firebase Cloud Messaging HTTP v1: a data message with high Android priority and a time to live
/// that ends with the approval. Each service account serves the devices whose app belongs to its
/// project; one access token per project is reused until it is due for renewal.
public struct FCMGateway: PushGateway {
    private let projects: AppConfigurations<Project>
    /// Each service account's access token, by `FCMServiceAccount.credentialKey`.
    private let accessTokens: [String: FCMAccessToken]
    private let client: HTTPClient
    private let now: @Sendable () -> Date

    struct Project: Sendable {
        let account: FCMServiceAccount
        let accessToken: FCMAccessToken
    }

    /// `tokenTimeLimit`: the seconds a request for an access token may take (an attempt's time limit). A
    /// gateway built again after a configuration changed takes over `previous`'s access tokens for the
    /// service accounts that did not change. `withheld` are the project ids of configurations that could
    /// not be opened: their devices are refused, not sent through another project.
    public init(
        accounts: [FCMServiceAccount], withholding withheld: Set<String> = [], client: HTTPClient, tokenTimeLimit: TimeInterval = 15,
        now: @escaping @Sendable () -> Date = Date.init, reusing previous: FCMGateway? = nil
    ) async {
        var projects: [Project] = []
        var tokens: [String: FCMAccessToken] = [:]
        for account in accounts {
            let key = account.credentialKey
            let token = if let kept = tokens[key] ?? previous?.accessTokens[key] { kept } else {
                await FCMAccessToken(account: account, client: client, timeLimit: tokenTimeLimit, now: now)
            }
            tokens[key] = token
            projects.append(Project(account: account, accessToken: token))
        }
        self.projects = AppConfigurations(projects, withholding: withheld) { $0.account.projectID }
        accessTokens = tokens
        self.client = client
        self.now = now
    }

    public func send(_ notification: PushNotification, to target: PushTarget) async -> DeliveryOutcome {
        guard let deviceToken = target.token, !deviceToken.isEmpty else { return .tokenInvalid(reason: "UNREGISTERED") }
        guard let project = projects.serving(target.appID) else {
            return .rejected(reason: "no FCM configuration for project '\(target.appID ?? "")'")
        }
        let ttl = max(0, Int(notification.expiresAt.timeIntervalSince(now()).rounded(.up)))
        let message: JSONValue = [
            "message": [
                "token": .string(deviceToken),
                "data": .object(notification.payload.mapValues { .string($0) }),
                "android": ["priority": "high", "ttl": .string("\(ttl)s"), "collapse_key": .string(notification.collapseID)],
            ],
        ]
        guard let body = try? JSONEncoder.sortedKeys.encode(message) else { return .rejected(reason: "the message cannot be encoded") }
        // An access token revoked or expired early is renewed once.
        return await attemptRenewingOnce({ await attempt(body, project) }, cache: project.accessToken.cache)
    }

    private func attempt(_ body: Data, _ project: Project) async -> CredentialedAttempt {
        let account = project.account
        var request = HTTPClientRequest(url: "\(account.sendBaseURL)/v1/projects/\(account.projectID)/messages:send")
        request.method = .POST
        let token: String
        do {
            token = try await project.accessToken.cache.value()
        } catch let refused as FCMAccessToken.TokenRefused where refused.isFinal {
            return .done(.rejected(reason: "access token: \(refused)"))
        } catch {
            return .done(.retryable(reason: "access token: \(error)", retryAfter: nil))
        }
        request.headers.add(name: "authorization", value: "Bearer \(token)")
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let reply = try await ProviderReply.exchange(request, with: client, trust: account.trust)
            let error = (try? JSONDecoder().decode(ErrorReply.self, from: reply.body))?.error
            let code = error?.errorCode ?? error?.status ?? "HTTP \(reply.status)"
            switch reply.status {
            case 200: return .done(.delivered)
            case 401: return .credentialRefused(code, credential: token)
            case 429, 500...599: return .done(.retryable(reason: code, retryAfter: reply.retryAfter))
            case 404 where code == "UNREGISTERED", 400 where code == "UNREGISTERED": return .done(.tokenInvalid(reason: code))
            case 400 where code == "INVALID_ARGUMENT" && error?.concernsToken == true: return .done(.tokenInvalid(reason: code))
            default: return .done(.rejected(reason: code))
            }
        } catch {
            return .done(.retryable(reason: "network: \(error)", retryAfter: nil))
        }
    }

    /// Google's error body: `{"error": {"status", "message", "details": [{"errorCode"}, {"fieldViolations"}]}}`.
    struct ErrorReply: Decodable {
        let error: Body

        struct Body: Decodable {
            let status: String?
            let message: String?
            let details: [Detail]?

            /// The FCM-specific code (`UNREGISTERED`, `INVALID_ARGUMENT`, …) when present.
            var errorCode: String? { details?.lazy.compactMap(\.errorCode).first }

            /// Whether the refusal is about the registration token rather than the message.
            var concernsToken: Bool {
                details?.contains { $0.fieldViolations?.contains { $0.field == "message.token" } == true } == true
                    || message?.localizedCaseInsensitiveContains("registration token") == true
            }
        }

        struct Detail: Decodable {
            let errorCode: String?
            let fieldViolations: [FieldViolation]?
        }

        struct FieldViolation: Decodable {
            let field: String?
        }
    }
}
