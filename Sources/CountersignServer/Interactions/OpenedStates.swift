import Journeys
import Synchronization

/// The states of running interactions as this instance last committed them, decoded, so that the next
/// call on the same interaction need not open and decode the stored state again (4.6 % of the server's
/// CPU in a `web_login` flow, measured).
///
/// The database stays the only truth: a state is reused only when the row read for the call holds exactly
/// the sealed text it was committed as. Every seal has a fresh random nonce, so a state another instance
/// saved, or an older one, never matches, and is opened from the row.
///
/// Bounded: two generations of at most `capacity / 2` states each; when the newer one is full, the older
/// one is dropped. A state missing here costs only the decoding it would have cost anyway.
final class OpenedStates: Sendable {
    private struct Entry {
        let sealed: String
        let state: InteractionState
    }

    private struct Generations {
        var newer: [String: Entry] = [:]
        var older: [String: Entry] = [:]
    }

    private let generations = Mutex(Generations())
    private let generationSize: Int

    init(capacity: Int = 4096) {
        generationSize = max(1, capacity / 2)
    }

    /// The state of `interactionID` when `sealed` is what this instance committed for it last.
    func state(of interactionID: String, sealed: String) -> InteractionState? {
        generations.withLock { generations in
            guard let entry = generations.newer[interactionID] ?? generations.older[interactionID], entry.sealed == sealed else {
                return nil
            }
            return entry.state
        }
    }

    /// Remembers the state just committed for `interactionID` as `sealed`.
    func remember(_ state: InteractionState, sealed: String, of interactionID: String) {
        let dropped = generations.withLock { generations -> [String: Entry] in
            generations.older[interactionID] = nil
            var dropped: [String: Entry] = [:]
            if generations.newer.count >= generationSize {
                dropped = generations.older
                generations.older = generations.newer
                generations.newer = [:]
            }
            generations.newer[interactionID] = Entry(sealed: sealed, state: state)
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
}
