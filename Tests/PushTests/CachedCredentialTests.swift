import Foundation
@testable import Push
import Synchronization
import Testing

@Suite("A cached provider credential")
struct CachedCredentialTests {
    /// How many credentials a cache has issued.
    final class IssueCount: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func next() -> Int {
            count.withLock { count in
                count += 1
                return count
            }
        }
    }

    /// A cache whose credentials are `token-1`, `token-2`, …, each valid for a minute of `clock`.
    static func cache(clock: ManualClock, issued: IssueCount) -> CachedCredential {
        CachedCredential(now: { clock.now() }) {
            let number = issued.next()
            try await Task.sleep(for: .milliseconds(20))
            return ("token-\(number)", clock.now().addingTimeInterval(60))
        }
    }

    @Test("callers arriving during a renewal wait for it; it is renewed when due")
    func oneRenewalAtATime() async throws {
        let clock = ManualClock()
        let issued = IssueCount()
        let cache = Self.cache(clock: clock, issued: issued)
        let values = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await cache.value() } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(values == ["token-1"])
        #expect(issued.value == 1)
        clock.advance(by: 61)
        #expect(try await cache.value() == "token-2")
    }

    @Test("a refusal drops the credential only while it is still the cached one")
    func invalidateIfCurrent() async throws {
        let issued = IssueCount()
        let cache = Self.cache(clock: ManualClock(), issued: issued)
        #expect(try await cache.value() == "token-1")
        await cache.invalidate("token-1")
        #expect(try await cache.value() == "token-2")
        // A late refusal of the old credential changes nothing.
        await cache.invalidate("token-1")
        #expect(try await cache.value() == "token-2")
        #expect(issued.value == 2)
    }
}
