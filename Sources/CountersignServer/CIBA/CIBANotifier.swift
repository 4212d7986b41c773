import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Ping mode (CIBA Core §10.2): once a backend client's request is answered (approved, denied, expired),
/// POSTs `{"auth_req_id": …}` to the client's notification endpoint with its bearer token, so it redeems
/// at once instead of polling. The notification is durable (the request's row says it is due, so it
/// survives a restart), sent by one instance (each attempt claimed by a compare-and-set), never follows a
/// redirect, and is retried only after a connection error or a 5xx, for at most a minute.
final class CIBANotifier: ServerLifecycle {
    private let storage: Storage
    private let client: HTTPClient
    private let secrets: SecretBox
    private let clock: any WallClock
    private let events: any EventBus
    private let metrics: ServerMetrics
    private let logger: Logger
    private let loop = ServerLifetimeTask()

    /// How long an attempt's claim keeps other instances away; an attempt ends well within it.
    static let lease: TimeInterval = 30
    static let attemptTimeLimit = TimeAmount.seconds(10)
    /// How long after the first attempt retries stop.
    static let retryWindow: TimeInterval = 60
    /// How often due notifications are looked for when nothing rings (expiries, retries, other instances).
    static let idleCheck = Duration.seconds(1)

    init(
        storage: Storage, client: HTTPClient, secrets: SecretBox, clock: any WallClock, events: any EventBus, metrics: ServerMetrics,
        logger: Logger
    ) {
        self.storage = storage
        self.client = client
        self.secrets = secrets
        self.clock = clock
        self.events = events
        self.metrics = metrics
        self.logger = logger
    }

    func didBoot() throws {
        loop.start { await self.run() }
    }

    func shutdown() async {
        await loop.stop { await self.events.publish(EventTopic.cibaPings, "") }
    }

    private func run() async {
        let doorbell = await events.subscribe(EventTopic.cibaPings)
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                do {
                    let now = clock.now()
                    for due in try await storage.cibaRequests.duePings(at: now, limit: 32) {
                        // Another instance may have claimed it since the read.
                        guard try await storage.cibaRequests.claimPing(due.request.id, at: now, leaseEnd: now.addingTimeInterval(Self.lease))
                        else { continue }
                        group.addTask { await self.notify(due) }
                    }
                } catch {
                    logger.error("the due CIBA pings cannot be read", metadata: ["error": "\(error)"])
                }
                _ = await doorbell.next(within: Self.idleCheck)
            }
        }
        await events.unsubscribe(doorbell)
    }

    /// What one attempt came to.
    private enum Outcome: String {
        case delivered
        case retryScheduled = "retry_scheduled"
        case gaveUp = "gave_up"
    }

    /// One attempt, and what follows from its answer.
    private func notify(_ due: CIBARequestStore.DuePing) async {
        let request = due.request
        do {
            guard let sealedToken = request.notificationToken, let sealedID = request.notificationAuthReqID,
                let token = try? secrets.open(sealedToken, boundTo: request.id), let authReqID = try? secrets.open(sealedID, boundTo: request.id)
            else {
                // Sealed under another master key: it can never be sent, so it is given up, not claimed again forever.
                logger.error("a CIBA ping cannot be unsealed, and is given up", metadata: ["request": "\(request.id)"])
                metrics.cibaPinged(outcome: Outcome.gaveUp.rawValue)
                return try await storage.cibaRequests.pinged(request.id, at: clock.now())
            }
            let outcome: Outcome
            var reason: String
            do {
                var post = HTTPClientRequest(url: due.endpoint)
                post.method = .POST
                post.headers.add(name: "Content-Type", value: "application/json")
                post.headers.add(name: "Authorization", value: "Bearer \(token)")
                post.body = .bytes(ByteBuffer(bytes: try JSONEncoder.wire.encode(["auth_req_id": authReqID])))
                let response = try await client.execute(post, timeout: Self.attemptTimeLimit)
                reason = "HTTP \(response.status.code)"
                switch response.status.code {
                case 200..<300: outcome = .delivered
                case 500..<600: outcome = retryOrGiveUp(request)
                // A redirect is not followed (the token would go where the client did not register); a 4xx
                // is the client's final word.
                default: outcome = .gaveUp
                }
            } catch {
                reason = "\(error)"
                outcome = retryOrGiveUp(request)
            }
            let now = clock.now()
            switch outcome {
            case .delivered, .gaveUp: try await storage.cibaRequests.pinged(request.id, at: now)
            case .retryScheduled: try await storage.cibaRequests.retryPing(request.id, at: now.addingTimeInterval(backoff(request, at: now)))
            }
            metrics.cibaPinged(outcome: outcome.rawValue)
            if outcome != .delivered {
                logger.warning("CIBA ping not delivered", metadata: [
                    "request": "\(request.id)", "client": "\(request.clientID)", "outcome": "\(outcome.rawValue)", "reason": "\(reason)",
                ])
            }
        } catch {
            logger.error("a CIBA ping could not be sent", metadata: ["request": "\(request.id)", "error": "\(error)"])
        }
    }

    /// A retry while the window since the first attempt lasts; giving up after it.
    private func retryOrGiveUp(_ request: CIBARequestRecord) -> Outcome {
        let first = request.notifyFirstAttemptAt ?? clock.now()
        return clock.now().timeIntervalSince(first) < Self.retryWindow ? .retryScheduled : .gaveUp
    }

    /// 1, 2, 4, 8… seconds after the attempts so far, doubling with the time since the first.
    private func backoff(_ request: CIBARequestRecord, at now: Date) -> TimeInterval {
        let elapsed = now.timeIntervalSince(request.notifyFirstAttemptAt ?? now)
        return min(max(1, elapsed), 16)
    }
}
