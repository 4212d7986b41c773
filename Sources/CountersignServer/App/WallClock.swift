import Foundation

/// The time, injected so that expiry can be tested without waiting.
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The system clock.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}
