import CountersignCore
import Foundation
import Journeys
import Synchronization

/// New approvals the push-fatigue limits refused, answered again from memory until their `Retry-After`
/// ends: a request repeated meanwhile from the same source, for the same identifier, through the same
/// client, is refused before anything is read. So a registered email and an unknown one answer repeats
/// after the same work (none), which leaves nothing to time, and a flood of repeats costs the database
/// nothing. Each instance keeps its own, bounded; it loses nothing a restart matters for (the limits,
/// read from the database, refuse the first repeat again).
final class RecentRefusals: Sendable {
    /// Who was refused: the client, the identifier (canonical) and the source as the request presented
    /// it (its address block, and the hash of any browser credential it sent).
    struct Key: Hashable, Sendable {
        let clientID: String
        let identifier: String
        let source: String

        init(clientID: String, identifier: String, origin: RequestOrigin) {
            self.clientID = clientID
            self.identifier = ExternalUserID.canonical(identifier)
            source = (origin.clientIP.map(AddressBlock.of) ?? "unknown") + "\n" + (origin.browserCredentialHash ?? "")
        }
    }

    /// At most this many refusals are kept; past it, expired ones are let go, and new ones are not kept
    /// until there is room (they are refused from the database, as the first is).
    static let capacity = 10_000

    private struct Entries {
        var refusedUntil: [Key: Date] = [:]
        /// When expired entries were last let go: at most once a second, so a full table costs a scan a
        /// second, not one per refusal.
        var prunedAt = Date.distantPast
    }

    private let entries = Mutex(Entries())

    /// The refusal to answer `key` with at `now`, while one is remembered.
    func refusal(for key: Key, at now: Date) -> ServiceError? {
        guard let until = entries.withLock({ $0.refusedUntil[key] }), now < until else { return nil }
        return ApprovalLimiter.tooSoon(seconds: ApprovalLimiter.wholeSeconds(from: now, to: until))
    }

    func remember(_ key: Key, refusedFor seconds: Int, at now: Date) {
        entries.withLock { entries in
            if entries.refusedUntil.count >= Self.capacity, now.timeIntervalSince(entries.prunedAt) >= 1 {
                entries.refusedUntil = entries.refusedUntil.filter { $0.value > now }
                entries.prunedAt = now
            }
            guard entries.refusedUntil.count < Self.capacity else { return }
            entries.refusedUntil[key] = now.addingTimeInterval(TimeInterval(seconds))
        }
    }
}
