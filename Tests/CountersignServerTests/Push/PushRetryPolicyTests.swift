@testable import CountersignServer
import Testing

@Suite("Push retries back off")
struct PushRetryPolicyTests {
    @Test("each retry waits in the upper half of a doubling delay, capped at 60 s, and never less than Retry-After")
    func backoff() {
        let policy = PushRetryPolicy()
        for (attempt, ceiling) in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (6, 32.0), (7, 60.0), (20, 60.0)] {
            for _ in 0..<50 {
                let delay = policy.delay(afterAttempt: attempt, retryAfter: nil)
                #expect(delay >= ceiling / 2 && delay <= ceiling, "attempt \(attempt): \(delay)")
            }
        }
        #expect(policy.delay(afterAttempt: 1, retryAfter: 30) == 30)
        #expect(policy.delay(afterAttempt: 7, retryAfter: 5) >= 30)
    }
}
