import Foundation

/// A provider credential (APNs provider token, FCM access token) reused until it is due for renewal.
/// One renewal at a time: sends arriving while it runs wait for it instead of each making their own
/// (Apple throttles provider token updates; each FCM renewal is a round trip to Google). A refused
/// credential is dropped only while it is still the cached one, so many sends refused with the same old
/// credential cause one renewal.
actor CachedCredential {
    typealias Issued = (value: String, renewAt: Date)

    private let now: @Sendable () -> Date
    private let issue: @Sendable () async throws -> Issued
    private var current: Issued?
    private var renewal: Task<Issued, any Error>?

    /// `issue` makes a new credential and says when to renew it.
    init(now: @escaping @Sendable () -> Date, issue: @escaping @Sendable () async throws -> Issued) {
        self.now = now
        self.issue = issue
    }

    /// The cached credential, or a new one once it is due.
    func value() async throws -> String {
        if let current, now() < current.renewAt { return current.value }
        let renewal = self.renewal ?? Task { [issue] in try await issue() }
        self.renewal = renewal
        do {
            let issued = try await renewal.value
            if self.renewal == renewal {
                self.renewal = nil
                current = issued
            }
            return issued.value
        } catch {
            if self.renewal == renewal { self.renewal = nil }
            throw error
        }
    }

    /// Drops `refused` after the provider refused it, unless it was already replaced.
    func invalidate(_ refused: String) {
        if current?.value == refused { current = nil }
    }
}
