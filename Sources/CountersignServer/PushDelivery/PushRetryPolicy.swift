import Foundation

/// When a push the provider could not take now (429, 5xx, network trouble) is tried again: exponential
/// backoff with jitter, never sooner than the provider's `Retry-After`.
struct PushRetryPolicy: Sendable {
    /// The wait after the first failed attempt, before jitter.
    var initialDelay: TimeInterval = 1
    var maximumDelay: TimeInterval = 60

    /// The wait after failed attempt number `attempt` (1-based): a random point in the upper half of
    /// `initialDelay * 2^(attempt-1)` (capped), or `retryAfter` when that is longer.
    func delay(afterAttempt attempt: Int, retryAfter: TimeInterval?) -> TimeInterval {
        let exponential = min(maximumDelay, initialDelay * pow(2, Double(max(attempt, 1) - 1)))
        return max(Double.random(in: exponential / 2...exponential), retryAfter ?? 0)
    }
}
