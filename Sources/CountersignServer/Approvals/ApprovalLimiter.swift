import CountersignCore
import Foundation
import Journeys

/// The push-fatigue limits a new approval must pass (DESIGN.md §6). A refusal is `429 rate_limited` with
/// `Retry-After`, creates nothing, and is recorded as a security event.
///
/// Each source (`RequestSource`: an address block, or a browser the person signed in with before) backs
/// off on its own requests since the person last approved one, so a stranger typing a person's email
/// waits ever longer while the person's own sign-in goes through. Many sources together are kept from
/// ringing the phone often by a cap on rings an hour, not by refusing the person: past it, requests from
/// browsers she has not signed in with still reach her phone's inbox, without ringing. Her known browsers
/// always ring; while one's request waits, other sources' requests reach the inbox beside it, silently.
struct ApprovalLimiter: Sendable {
    let storage: Storage
    let clock: any WallClock
    let securityEvents: SecurityEvents

    /// The subject's newest requests looked at: enough for the longest backoff (10 s doubled nine times
    /// is past an hour) among other sources' requests.
    static let approvalsLookedAt = 32

    /// The window of the rings cap.
    static let ringWindow: TimeInterval = 3600

    /// What a new request for a subject goes ahead with.
    struct Admission {
        /// The subject's approvals and decoys still pending that the new one replaces (with one pending per
        /// user), newest first: a known browser's are left to it unless the new one is a known browser's.
        let pending: [ApprovalOutcomeRow]
        /// The number a new approval takes among the user's approvals; nil when the limits do not depend on
        /// earlier requests.
        let approvalSequence: Int?
        /// The number a new decoy takes among the identifier's decoys; nil as for an approval.
        let decoySequence: Int?
        /// Where the new request came from (`RequestSource`), which its row keeps.
        let source: String
        /// Whether its push may ring the phone (within the rings cap, or from a known browser).
        let rings: Bool
    }

    /// Refuses a new request for `subject` from `source` when `limits` say so. Two reads: the subject's
    /// newest requests, and (unless the source is a known browser) the phone's rings in the last hour.
    ///
    /// The request is admitted on the history as read. Its insert carries the next number in that
    /// history, which is unique there: if another call creates a request for the subject before this one
    /// commits, this one's insert changes nothing and the call is refused (`concurrentRequest(for:)`).
    /// Where the limits do not depend on earlier requests (neither one pending per user nor a backoff),
    /// requests made at once are all admitted and carry no number.
    func admit(_ subject: ApprovalSubject, from source: String, limits: ApprovalLimits) async throws -> Admission {
        let now = clock.now()
        let recent = try await storage.approvals.outcomes(of: subject, limit: Self.approvalsLookedAt)
        let knownBrowser = RequestSource.isKnownBrowser(source)
        // A report blocks the source of the request reported, not the person's own sign-ins from elsewhere.
        // While it blocks, that source creates no newer approval; other sources' requests may push the report
        // out of those read, which frees the source only for a stranger who has other addresses anyway.
        if limits.notMeBlock > 0,
            let reported = recent.filter({ $0.sourceDigest == source }).compactMap(\.reportedNotMineAt).max(),
            now < reported.addingTimeInterval(limits.notMeBlock)
        {
            throw refusal(subject, until: reported.addingTimeInterval(limits.notMeBlock), now: now,
                because: "the user reported a request from this source as not theirs")
        }
        // The requests since the person last approved one, newest first. A request of a known browser that
        // still waits is none of another source's business: such a request neither waits on it nor replaces
        // it, and does not ring (so that no answer tells a stranger she is signing in now).
        let unapproved = recent.prefix { $0.status(at: now) != .approved }
        let knownBrowserWaiting = !knownBrowser && unapproved.contains {
            $0.status(at: now) == .pending && $0.sourceDigest != source && RequestSource.isKnownBrowser($0.sourceDigest)
        }
        let waitingElsewhere = unapproved.filter {
            $0.status(at: now) == .pending && $0.sourceDigest != source && (knownBrowser || !RequestSource.isKnownBrowser($0.sourceDigest))
        }
        let ownRequests = unapproved.filter { $0.sourceDigest == source }
        var counted = ownRequests.count
        var since = ownRequests.first?.createdAt
        // Another source's request still waiting holds back this one for the first step, so that it is not
        // replaced within seconds; a known browser replaces it at once.
        if !knownBrowser, counted == 0, let waiting = waitingElsewhere.first {
            counted = 1
            since = waiting.createdAt
        }
        let backoff = limits.backoff(afterUnapproved: counted)
        if backoff > 0, let since, now < since.addingTimeInterval(backoff) {
            throw refusal(subject, until: since.addingTimeInterval(backoff), now: now,
                because: "\(counted) requests in a row from this source were not approved")
        }
        func next(decoys: Bool) -> Int? {
            guard limits.dependOnEarlierRequests else { return nil }
            return (recent.filter { DecoyApprovalRecord.isDecoy($0.id) == decoys }.compactMap(\.subjectSequence).max() ?? 0) + 1
        }
        let withinCap = try await mayRing(subject.userID, from: source, limits: limits, at: now)
        return Admission(
            pending: recent.filter { $0.status(at: now) == .pending && (knownBrowser || !RequestSource.isKnownBrowser($0.sourceDigest)) },
            approvalSequence: next(decoys: false), decoySequence: next(decoys: true), source: source,
            rings: withinCap && !knownBrowserWaiting)
    }

    /// Whether a push for user `userID` from `source` may ring the phone now. Asked for decoys too (for
    /// no user, or a user of another application), so that both kinds of request do the same work.
    func mayRing(_ userID: String?, from source: String, limits: ApprovalLimits, at now: Date) async throws -> Bool {
        guard !RequestSource.isKnownBrowser(source), limits.ringsPerHour > 0 else { return true }
        return try await storage.approvals.rings(toUser: userID, since: now.addingTimeInterval(-Self.ringWindow)) < limits.ringsPerHour
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
        let seconds = Self.wholeSeconds(from: now, to: date)
        let securityEvents = securityEvents
        return RecordedRefusal(refusal: Self.tooSoon(seconds: seconds)) {
            try await securityEvents.recordNow(
                .rateLimited, userID: subject.userID, detail: "a new approval was refused for \(seconds) s: \(reason)",
                source: subject.userID ?? "identifiers naming no user")
        }
    }

    /// Whole seconds from `now` to `date`, rounded up, at least one; less the millisecond a time read back
    /// from the database may gain.
    static func wholeSeconds(from now: Date, to date: Date) -> Int {
        max(1, Int((date.timeIntervalSince(now) - 0.001).rounded(.up)))
    }

    /// The refusal of a new approval for `seconds`, the same for every reason and every identifier.
    static func tooSoon(seconds: Int) -> ServiceError {
        ServiceError(.tooSoon(retryAfter: seconds), ErrorCode.rateLimited, "Too many requests for this user; try again in \(seconds) s.")
    }
}
