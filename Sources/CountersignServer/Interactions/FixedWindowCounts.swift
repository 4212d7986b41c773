import Foundation

/// Counts by key in fixed windows of time, all forgotten when a window ends: what the start limits and the
/// admin key's guess limit count on each instance.
struct FixedWindowCounts {
    let window: TimeInterval
    private var index = 0
    private var counts: [String: Int] = [:]

    init(window: TimeInterval) {
        self.window = window
    }

    /// Starts a new window when `now` is past the current one.
    mutating func roll(to now: Date) {
        let current = Int(now.timeIntervalSince1970 / window)
        if current != index {
            index = current
            counts.removeAll(keepingCapacity: true)
        }
    }

    subscript(key: String) -> Int {
        get { counts[key, default: 0] }
        set { counts[key] = newValue }
    }

    /// How many keys the window has counted.
    var keys: Int { counts.count }

    /// Whole seconds from `now` until the window ends, at least one: a refusal's `Retry-After`.
    func secondsLeft(at now: Date) -> Int {
        max(1, Int((Double(index + 1) * window - now.timeIntervalSince1970).rounded(.up)))
    }
}
