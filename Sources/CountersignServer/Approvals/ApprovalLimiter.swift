import CountersignCore
import Foundation
import Journeys

/// The push-fatigue limits a new approval must pass (DESIGN.md §6): no "this wasn't me" report of a
/// request from the same source within the block, and the backoff after requests that were not approved. A refusal is `429 rate_limited` with
/// `Retry-After`, creates nothing, and is recorded as a security event.
///
/// The backoff counts the requests since the person last approved one, but those of the one other source
/// (`RequestSource`) with the most: a stranger at one address who types a person's email again and again
/// waits ever longer, and the person's own sign-in from elsewhere is held back by the stranger's requests
/// only while one is still waiting, for the first step. Sources taking turns count against each other,
/// so any number of them reach the hour's wait after about twice the requests one source needs (and
/// keep the person waiting as one source could without this rule: an address cannot tell her from them).
struct ApprovalLimiter: Sendable {
    let storage: Storage
    let clock: any WallClock
    let securityEvents: SecurityEvents

    /// The subject's newest requests looked at: enough for the longest backoff (10 s doubled nine times
    /// is past an hour) when two sources taking turns leave out half of them.
    static let approvalsLookedAt = 32

    /// What a new request for a subject goes ahead with.
    struct Admission {
        /// The subject's approvals and decoys still pending, newest first.
        let pending: [ApprovalOutcomeRow]
        /// The number a new approval takes among the user's approvals; nil when the limits do not depend on
        /// earlier requests.
        let approvalSequence: Int?
        /// The number a new decoy takes among the identifier's decoys; nil as for an approval.
        let decoySequence: Int?
        /// Where the new request came from (`RequestSource`), which its row keeps.
        let source: String
    }

    /// Refuses a new request for `subject` when `limits` say so. One read: the subject's newest requests.
    ///
    /// The request is admitted on the history as read. Its insert carries the next number in that
    /// history, which is unique there: if another call creates a request for the subject before this one
    /// commits, this one's insert changes nothing and the call is refused (`concurrentRequest(for:)`).
    /// Where the limits do not depend on earlier requests (neither one pending per user nor a backoff),
    /// requests made at once are all admitted and carry no number.
    func admit(_ subject: ApprovalSubject, from source: String, limits: ApprovalLimits) async throws -> Admission {
        let now = clock.now()
        let read = try await storage.approvals.outcomes(of: subject, limit: Self.approvalsLookedAt)
        let recent = read.prefix(Self.approvalsLookedAt)
        // A report blocks the source of the request reported, not the person's own sign-ins from elsewhere.
        // While it blocks, that source creates no newer approval, and the others' are few enough in its hour
        // (the backoff) that the reported one stays among those read.
        if limits.notMeBlock > 0,
            let reported = recent.filter({ $0.sourceDigest == source }).compactMap(\.reportedNotMineAt).max(),
            now < reported.addingTimeInterval(limits.notMeBlock)
        {
            throw refusal(subject, until: reported.addingTimeInterval(limits.notMeBlock), now: now,
                because: "the user reported a request from this source as not theirs")
        }
        // The requests since the person last approved one, newest first, less those of the one other source
        // with the most.
        let unapproved = recent.prefix { $0.status(at: now) != .approved }
        var bySource: [String: Int] = [:]
        for row in unapproved where row.sourceDigest != source { bySource[row.sourceDigest, default: 0] += 1 }
        var counted = unapproved.count - (bySource.values.max() ?? 0)
        // A request still waiting holds back any other for the first step: it is not replaced within seconds.
        if counted == 0, unapproved.contains(where: { $0.status(at: now) == .pending }) { counted = 1 }
        let backoff = limits.backoff(afterUnapproved: counted)
        if backoff > 0, let newest = recent.first {
            let allowedAt = newest.createdAt.addingTimeInterval(backoff)
            if now < allowedAt {
                throw refusal(subject, until: allowedAt, now: now, because: "\(unapproved.count) requests in a row were not approved")
            }
        }
        func next(decoys: Bool) -> Int? {
            guard limits.dependOnEarlierRequests else { return nil }
            return (read.filter { DecoyApprovalRecord.isDecoy($0.id) == decoys }.compactMap(\.subjectSequence).max() ?? 0) + 1
        }
        return Admission(
            pending: recent.filter { $0.status(at: now) == .pending }, approvalSequence: next(decoys: false),
            decoySequence: next(decoys: true), source: source)
    }

    /// The refusal of a request whose insert found its number taken: another request for the subject was
    /// created after this one read the history. It is answered as the limits' refusals are, for a second.
    func concurrentRequest(for subject: ApprovalSubject) -> RecordedRefusal {
        let now = clock.now()
        return refusal(subject, until: now.addingTimeInterval(1), now: now, because: "another request was created at the same time")
    }

    /// The refusal is the same whether the identifier has a phone or not; only the security event (for
    /// the operator) names the user, when there is one. Refusals for identifiers naming no user share one
    /// source, so typing many of them cannot crowd out what is stored about real users. The event is
    /// recorded once the call ends with the refusal (`RecordedRefusal`).
    private func refusal(_ subject: ApprovalSubject, until date: Date, now: Date, because reason: String) -> RecordedRefusal {
        // Whole seconds, rounded up; less the millisecond a time read back from the database may gain.
        let seconds = max(1, Int((date.timeIntervalSince(now) - 0.001).rounded(.up)))
        let securityEvents = securityEvents
        return RecordedRefusal(
            refusal: ServiceError(.tooSoon(retryAfter: seconds), ErrorCode.rateLimited, "Too many requests for this user; try again in \(seconds) s.")
        ) {
            try await securityEvents.recordNow(
                .rateLimited, userID: subject.userID, detail: "a new approval was refused for \(seconds) s: \(reason)",
                source: subject.userID ?? "identifiers naming no user")
        }
    }
}
