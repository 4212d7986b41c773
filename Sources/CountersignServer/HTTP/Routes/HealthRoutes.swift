import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// What a load balancer and an orchestrator ask: `GET /healthz`, whether the process answers at all
/// (liveness, never touching the database), and `GET /readyz`, whether this instance can serve requests
/// now: its database answers within `readinessTimeout` and, with several instances, it hears their events.
struct HealthRoutes: RouteGroup {
    let storage: Storage
    let events: any EventBus

    static let readinessTimeout = Duration.seconds(2)

    /// The liveness answer, encoded once.
    private static let alive = Data(#"{"status":"ok"}"#.utf8)

    func register(on router: Router<ServerRequestContext>) {
        router.get("healthz") { _, _ in Response.wireEncoded(Self.alive) }
        router.get("readyz") { _, _ in try await readiness() }
    }

    private func readiness() async throws -> Response {
        let storage = storage
        let databaseAnswers = await succeeds(within: Self.readinessTimeout) { try await storage.db.run("SELECT 1") }
        let problem = !databaseAnswers ? "The database does not answer." : !events.isConnected ? "Other instances' events do not reach this one." : nil
        guard let problem else { return try Response.wire(["status": "ready"], cacheControl: "no-store") }
        return ErrorMiddleware.response(
            status: .serviceUnavailable, error: WireError(code: ErrorCode.notReady, message: problem),
            headers: [.retryAfter: String(DatabaseOutage.retryAfter)])
    }
}

/// Whether `work` finishes without throwing within `limit`. It is not waited for past the limit: a
/// statement on a connection that hangs may never return.
private func succeeds(within limit: Duration, _ work: @escaping @Sendable () async throws -> Void) async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let answer = FirstAnswer(continuation)
        let timer = eventLoopTimer(after: limit) { answer.give(false) }
        Task {
            answer.give((try? await work()) != nil)
            timer.cancel()
        }
    }
}

/// Resumes a continuation with whichever answer comes first.
private final class FirstAnswer: Sendable {
    private let continuation: Mutex<CheckedContinuation<Bool, Never>?>

    init(_ continuation: CheckedContinuation<Bool, Never>) {
        self.continuation = Mutex(continuation)
    }

    func give(_ answer: Bool) {
        continuation.withLock { pending in
            defer { pending = nil }
            return pending
        }?.resume(returning: answer)
    }
}
