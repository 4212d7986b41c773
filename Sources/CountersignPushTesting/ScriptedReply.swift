import Foundation
import Synchronization

/// An answer a fake provider gives instead of its normal one, e.g. `429` with `Retry-After`.
public struct ScriptedReply: Sendable {
    public let status: Int
    /// The provider's reason (`Unregistered`, `UNREGISTERED`, …).
    public let reason: String?
    public let retryAfter: Int?
    /// When given, the provider answers only once the test releases it: a slow provider, without timing.
    public let hold: ReplyHold?

    public init(status: Int, reason: String? = nil, retryAfter: Int? = nil, hold: ReplyHold? = nil) {
        self.status = status
        self.reason = reason
        self.retryAfter = retryAfter
        self.hold = hold
    }

    /// A normal answer, given once `hold` is released.
    public static func success(heldBy hold: ReplyHold) -> ScriptedReply {
        ScriptedReply(status: 200, hold: hold)
    }
}

/// Keeps a scripted answer back until the test calls `release()`; `reached()` tells the test a request
/// is being held.
public final class ReplyHold: Sendable {
    private let released: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let arrivals: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation

    public init() {
        (released, continuation) = AsyncStream.makeStream()
        (arrivals, arrived) = AsyncStream.makeStream()
    }

    public func release() {
        continuation.finish()
    }

    /// Returns once a request has reached the provider and waits for `release()`.
    public func reached() async {
        var iterator = arrivals.makeAsyncIterator()
        _ = await iterator.next()
    }

    func wait() async {
        arrived.yield()
        for await _ in released {}
    }
}

/// Replies to give, in order, before falling back to normal answers: for one device token, or for any.
final class ReplyScript: Sendable {
    /// Keyed by device token; `nil` holds the replies for any token.
    private let replies = Mutex<[String?: [ScriptedReply]]>([:])

    func append(_ more: [ScriptedReply], forToken token: String? = nil) {
        replies.withLock { $0[token, default: []] += more }
    }

    /// The answer to give: a request that passed the checks (`status` 200) takes the next scripted
    /// reply for its token, else the next one for any token, once its hold is released; any other verdict stands.
    func answer(to status: Int, _ reason: String?, token: String) async throws -> (status: Int, reason: String?, retryAfter: Int?) {
        guard status == 200, let scripted = replies.withLock({ replies in
            for key in [token, nil] where replies[key]?.isEmpty == false { return replies[key]?.removeFirst() }
            return nil
        }) else {
            return (status, reason, nil)
        }
        await scripted.hold?.wait()
        return (scripted.status, scripted.reason, scripted.retryAfter)
    }
}

/// What a fake provider received, oldest first.
final class RequestLog<Entry: Sendable>: Sendable {
    private let entries = Mutex<[Entry]>([])

    func append(_ entry: Entry) {
        entries.withLock { $0.append(entry) }
    }

    var all: [Entry] { entries.withLock { $0 } }
}
