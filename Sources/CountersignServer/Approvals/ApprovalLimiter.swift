import CountersignCore
import Foundation
import Journeys

/// The push-fatigue limits a new approval must pass (DESIGN.md §6): no "this wasn't me" report within
/// the block, and the backoff after requests that were not approved. A refusal is `429 rate_limited` with
/// `Retry-After`, creates nothing, and is recorded as a security event.
struct ApprovalLimiter: Sendable {
    let storage: Storage
    let clock: any WallClock
    let securityEvents: SecurityEvents

    /// The subject's newest requests looked at: enough for the longest backoff (10 s doubled nine times
    /// is past an hour).
    static let approvalsLookedAt = 16

    /// Refuses a new request for `subject` when `limits` say so; otherwise returns the subject's approvals
    /// and decoys still pending, newest first. One read: the subject's newest requests.
    func admit(_ subject: ApprovalSubject, limits: ApprovalLimits) async throws -> [ApprovalOutcomeRow] {
        let now = clock.now()
        // While a report blocks, no newer approval is created: the reported one stays among those read.
        let recent = try await storage.approvals.outcomes(of: subject, limit: Self.approvalsLookedAt)
        if limits.notMeBlock > 0, let reported = recent.compactMap(\.reportedNotMineAt).max(),
            now < reported.addingTimeInterval(limits.notMeBlock)
        {
            try refuse(subject, until: reported.addingTimeInterval(limits.notMeBlock), now: now,
                because: "the user reported a request as not theirs")
        }
        let unapproved = recent.prefix { $0.status(at: now) != .approved }.count
        let backoff = limits.backoff(afterUnapproved: unapproved)
        if backoff > 0, let newest = recent.first {
            let allowedAt = newest.createdAt.addingTimeInterval(backoff)
            if now < allowedAt {
                try refuse(subject, until: allowedAt, now: now, because: "\(unapproved) requests in a row were not approved")
            }
        }
        return recent.filter { $0.status(at: now) == .pending }
    }

    /// The refusal is the same whether the identifier has a phone or not; only the security event (for
    /// the operator) names the user, when there is one. Refusals for identifiers naming no user share one
    /// source, so typing many of them cannot crowd out what is stored about real users. The event is
    /// recorded once the call ends with the refusal (`RecordedRefusal`).
    private func refuse(_ subject: ApprovalSubject, until date: Date, now: Date, because reason: String) throws -> Never {
        // Whole seconds, rounded up; less the millisecond a time read back from the database may gain.
        let seconds = max(1, Int((date.timeIntervalSince(now) - 0.001).rounded(.up)))
        let securityEvents = securityEvents
        throw RecordedRefusal(
            refusal: ServiceError(.tooSoon(retryAfter: seconds), ErrorCode.rateLimited, "Too many requests for this user; try again in \(seconds) s.")
        ) {
            try await securityEvents.recordNow(
                .rateLimited, userID: subject.userID, detail: "a new approval was refused for \(seconds) s: \(reason)",
                source: subject.userID ?? "identifiers naming no user")
        }
    }
}
