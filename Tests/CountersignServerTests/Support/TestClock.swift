import CountersignServer
import Foundation
import Synchronization

/// A clock tests move by hand, so expiry is tested without sleeping.
final class TestClock: WallClock {
    private let current: Mutex<Date>

    init(_ start: Date = Date()) {
        current = Mutex(start)
    }

    func now() -> Date {
        current.withLock { $0 }
    }

    func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}
