import CountersignCore
import Foundation
import Logging

/// Caps how fast interactions are started, per client and per source address (DESIGN.md §6), so that a
/// stranger with a public client id cannot fill the database with anonymous interactions. Counted by each
/// instance on its own, in fixed windows of ten seconds; a refusal is `429 rate_limited` with
/// `Retry-After` and is logged once per window and key.
actor StartRateLimiter {
    static let window: TimeInterval = 10

    /// Starts per second allowed for one client and for one source address; 0 turns a limit off.
    private let perClient: Int
    private let perAddress: Int
    private let clock: any WallClock
    private let logger: Logger
    private var windowIndex = 0
    /// Starts counted in the current window, and keys already refused in it, by `client:` or `address:` key.
    private var counts: [String: Int] = [:]
    private var refused: Set<String> = []

    init(perClient: Int, perAddress: Int, clock: any WallClock, logger: Logger) {
        self.perClient = perClient
        self.perAddress = perAddress
        self.clock = clock
        self.logger = logger
    }

    /// Counts a start by `clientID` from `address`, or refuses it when either is over its limit.
    func admit(clientID: String, address: String?) throws {
        let now = clock.now().timeIntervalSince1970
        let index = Int(now / Self.window)
        if index != windowIndex {
            windowIndex = index
            counts.removeAll(keepingCapacity: true)
            refused.removeAll(keepingCapacity: true)
        }
        let limited = [("client:" + clientID, perClient), ("address:" + (address ?? "unknown"), perAddress)].filter { $0.1 > 0 }
        if let (key, _) = limited.first(where: { counts[$0.0, default: 0] >= $0.1 * Int(Self.window) }) {
            let retryAfter = max(1, Int((Double(index + 1) * Self.window - now).rounded(.up)))
            if refused.insert(key).inserted {
                logger.warning("security event", metadata: ["security_event": "rate_limited", "detail": "starts refused for \(key)"])
            }
            throw ServiceError(.tooSoon(retryAfter: retryAfter), ErrorCode.rateLimited, "Too many journeys started; try again in \(retryAfter) s.")
        }
        for (key, _) in limited { counts[key, default: 0] += 1 }
    }
}
