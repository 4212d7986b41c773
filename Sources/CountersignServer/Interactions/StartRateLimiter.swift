import CountersignCore
import Foundation

/// Caps how fast interactions are started, per client and per source address (DESIGN.md §6), so that a
/// stranger with a public client id cannot fill the database with anonymous interactions. Counted by each
/// instance on its own, in fixed windows of ten seconds; a refusal is `429 rate_limited` with
/// `Retry-After` and a security event (stored once a minute per key).
///
/// An address is counted with its block (`AddressBlock`). A client's allowance is shared by every address,
/// so that a few busy addresses cannot use it up for everyone, an address's first start of a window is
/// admitted even when it is spent, from a reserve of half the allowance again.
actor StartRateLimiter {
    static let window: TimeInterval = 10

    /// Starts per second allowed for one client and for one source address; 0 turns a limit off.
    private let perClient: Int
    private let perAddress: Int
    private let clock: any WallClock
    private let securityEvents: SecurityEvents
    /// Starts counted in the current window, by `client:`, `address:` or `reserve:` (the client's starts
    /// admitted from its reserve) key.
    private var counts = FixedWindowCounts(window: window)

    init(perClient: Int, perAddress: Int, clock: any WallClock, securityEvents: SecurityEvents) {
        self.perClient = perClient
        self.perAddress = perAddress
        self.clock = clock
        self.securityEvents = securityEvents
    }

    /// Counts a start by `clientID` from `address`, or refuses it when either is over its limit.
    func admit(clientID: String, address: String?) async throws {
        guard perClient > 0 || perAddress > 0 else { return }
        let now = clock.now()
        counts.roll(to: now)
        let window = Int(Self.window)
        let clientKey = "client:" + clientID
        let addressKey = "address:" + (address.map(AddressBlock.of) ?? "unknown")
        let reserveKey = "reserve:" + clientID
        let addressStarts = counts[addressKey]
        if perAddress > 0, addressStarts >= perAddress * window {
            return try await refuse(addressKey, now: now)
        }
        if perClient > 0, counts[clientKey] >= perClient * window {
            guard addressStarts == 0, counts[reserveKey] < perClient * window / 2 else {
                return try await refuse(clientKey, now: now)
            }
            counts[reserveKey] += 1
        }
        counts[clientKey] += 1
        counts[addressKey] += 1
    }

    private func refuse(_ key: String, now: Date) async throws {
        let retryAfter = counts.secondsLeft(at: now)
        try await securityEvents.recordNow(.rateLimited, detail: "journey starts refused for \(key)", source: key)
        throw ServiceError(.tooSoon(retryAfter: retryAfter), ErrorCode.rateLimited, "Too many journeys started; try again in \(retryAfter) s.")
    }
}
