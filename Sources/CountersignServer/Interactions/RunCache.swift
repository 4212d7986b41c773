import Journeys
import Synchronization

/// The running interactions as this instance last committed them: the row, and its state decoded. The
/// next call on the same interaction uses them instead of reading the row and opening its state again.
///
/// The database stays the only truth; a cached run is used in two ways only:
/// * **For a submit, in place of the read** (`lastCommitted`). Each save gives the run a new version (and,
///   but for a poll that finds it still waiting, a new interaction token), so a bearer matching the kept
///   row's token is the current one unless another instance has saved the run since. The submit's
///   compare-and-set on the row's version tells which at its commit; when it changes no row, or anything
///   fails before it, `InteractionService` answers from the database's row instead, as if nothing had
///   been kept.
/// * **For a read of the row, to skip opening its state** (`state(of:)`), only while the row holds exactly
///   the sealed text kept. Every seal has a fresh random nonce, so a state another instance saved, or an
///   older one, never matches.
///
/// Bounded: two generations of at most `capacity / 2` runs each; when the newer one is full, the older
/// one is dropped. A run missing here costs only the read it would have cost anyway.
final class RunCache: Sendable {
    struct Run: Sendable {
        let record: InteractionRecord
        let state: InteractionState
        /// For a mobile approve run: the approval it settles, once a call has read it (`settle` uses only what
        /// never changes of it).
        let cachedApproval: ApprovalRecord?
    }

    private struct Generations {
        var newer: [String: Run] = [:]
        var older: [String: Run] = [:]
    }

    private let generations = Mutex(Generations())
    private let generationSize: Int

    init(capacity: Int = 4096) {
        generationSize = max(1, capacity / 2)
    }

    /// The run `interactionID` as this instance last committed it, if it still keeps it.
    func lastCommitted(_ interactionID: String) -> Run? {
        generations.withLock { $0.newer[interactionID] ?? $0.older[interactionID] }
    }

    /// The decoded state of `record`, read from the database, when it is the row this instance committed last.
    func state(of record: InteractionRecord) -> InteractionState? {
        guard let run = lastCommitted(record.id), run.record.state == record.state else { return nil }
        return run.state
    }

    /// Keeps `record`, just committed, with its state decoded.
    func remember(_ record: InteractionRecord, state: InteractionState, cachedApproval: ApprovalRecord? = nil) {
        let dropped = generations.withLock { generations -> [String: Run] in
            generations.older[record.id] = nil
            var dropped: [String: Run] = [:]
            if generations.newer.count >= generationSize {
                dropped = generations.older
                generations.older = generations.newer
                generations.newer = [:]
            }
            generations.newer[record.id] = Run(record: record, state: state, cachedApproval: cachedApproval)
            return dropped
        }
        // The dropped generation is freed here, after the lock, so that no other call waits for it.
        _ = dropped
    }

    /// Forgets `interactionID`, which has ended.
    func forget(_ interactionID: String) {
        generations.withLock { generations in
            generations.newer[interactionID] = nil
            generations.older[interactionID] = nil
        }
    }

    /// Forgets `record`, found to be no longer the row, unless a newer save of its run is kept meanwhile.
    func forget(_ record: InteractionRecord) {
        generations.withLock { generations in
            if generations.newer[record.id]?.record.version == record.version { generations.newer[record.id] = nil }
            if generations.older[record.id]?.record.version == record.version { generations.older[record.id] = nil }
        }
    }
}
