import Foundation

/// Slows down guessing the admin key: a source (its address block) that sent `allowed` wrong keys in a
/// fixed window of a minute (`COUNTERSIGN_ADMIN_FAILURES_PER_MINUTE`, 0 for no limit) is refused `429
/// rate_limited` until the window ends, whatever key it sends
/// (were the right one let through, a 429 would only mean "wrong", and guessing would go on at full
/// speed). Counted by each instance on its own; at most `capacity` sources are remembered, the window's
/// first failures past it counted together, so a flood from many addresses cannot grow the map.
actor AdminGuessThrottle {
    static let window: TimeInterval = 60
    static let capacity = 10_000

    private let allowed: Int
    private let clock: any WallClock
    private var failures = FixedWindowCounts(window: window)

    init(allowed: Int, clock: any WallClock) {
        self.allowed = allowed
        self.clock = clock
    }

    /// Seconds until `source` may try again; nil when it may now.
    func retryAfter(for source: String) -> Int? {
        guard allowed > 0 else { return nil }
        let now = clock.now()
        failures.roll(to: now)
        return failures[key(source)] >= allowed ? failures.secondsLeft(at: now) : nil
    }

    func countFailure(of source: String) {
        guard allowed > 0 else { return }
        failures.roll(to: clock.now())
        failures[key(source)] += 1
    }

    /// The source's key, or the shared one once the window has seen `capacity` sources.
    private func key(_ source: String) -> String {
        failures[source] > 0 || failures.keys < Self.capacity ? source : "(more sources)"
    }
}
