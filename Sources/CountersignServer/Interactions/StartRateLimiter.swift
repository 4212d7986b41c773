import CountersignCore
import Foundation

/// Caps how fast interactions are started, per client and per source address (DESIGN.md §6), so that a
/// stranger with a public client id cannot fill the database with anonymous interactions. Counted by each
/// instance on its own, in fixed windows of ten seconds; a refusal is `429 rate_limited` with
/// `Retry-After` and a security event (stored once a minute per key).
actor StartRateLimiter {
    static let window: TimeInterval = 10

    /// Starts per second allowed for one client and for one source address; 0 turns a limit off.
    private let perClient: Int
    private let perAddress: Int
    private let clock: any WallClock
    private let securityEvents: SecurityEvents
    private var windowIndex = 0
    /// Starts counted in the current window, by `client:` or `address:` key.
    private var counts: [String: Int] = [:]

    init(perClient: Int, perAddress: Int, clock: any WallClock, securityEvents: SecurityEvents) {
        self.perClient = perClient
        self.perAddress = perAddress
        self.clock = clock
        self.securityEvents = securityEvents
    }

    /// Counts a start by `clientID` from `address`, or refuses it when either is over its limit.
    func admit(clientID: String, address: String?) async throws {
        let now = clock.now().timeIntervalSince1970
        let index = Int(now / Self.window)
        if index != windowIndex {
            windowIndex = index
            counts.removeAll(keepingCapacity: true)
        }
        let limited = [("client:" + clientID, perClient), ("address:" + (address ?? "unknown"), perAddress)].filter { $0.1 > 0 }
        guard let (key, _) = limited.first(where: { counts[$0.0, default: 0] >= $0.1 * Int(Self.window) }) else {
            for (key, _) in limited { counts[key, default: 0] += 1 }
            return
        }
        let retryAfter = max(1, Int((Double(index + 1) * Self.window - now).rounded(.up)))
        try await securityEvents.recordNow(.rateLimited, detail: "journey starts refused for \(key)", source: key)
        throw ServiceError(.tooSoon(retryAfter: retryAfter), ErrorCode.rateLimited, "Too many journeys started; try again in \(retryAfter) s.")
    }
}
