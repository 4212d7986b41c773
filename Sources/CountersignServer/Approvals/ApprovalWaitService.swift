import CountersignCore
import Foundation
import Journeys
import ServiceLifecycle

/// A browser's wait for the approval its interaction's step waits on (the events stream): opened once the
/// interaction token holds, ended when the approval is settled, the interaction expires, a newer stream
/// of the same interaction replaces it, or the server stops.
struct ApprovalWaitService: Sendable {
    let interactions: InteractionService
    let events: any EventBus
    let storage: Storage
    let openWaits: OpenWaits
    let clock: any WallClock

    /// How often a wait lets its caller send a keep-alive.
    static let keepAliveInterval: Duration = .seconds(15)

    /// An open wait: what `outcome(of:keepAlive:)` waits on.
    struct Wait: Sendable {
        fileprivate let interactionID: String
        fileprivate let approvalID: String
        fileprivate let mailbox: EventMailbox
        fileprivate let stream: EventStreamID
        fileprivate let end: Date
        /// The approval's status as read with the interaction, when it was.
        fileprivate let statusRead: ApprovalStatus?
    }

    /// Opens a wait on interaction `interactionID` for a browser holding `bearer` at the address block
    /// `source`; refused when the token does not hold, the step waits on no phone, or the source has its
    /// share of open streams.
    func open(_ interactionID: String, bearer: String?, source: String) async throws -> Wait {
        let topic = EventTopic.interaction(interactionID)
        // Subscribed before the read, so that a close committed after the read wakes this wait.
        let mailbox = await events.subscribe(topic)
        do {
            let read = try await interactions.approvalWaitedOn(interactionID, bearer: bearer)
            guard let approvalID = read.approvalID else {
                throw ServiceError(.conflict, ErrorCode.notWaiting, "The interaction is not waiting for a phone.")
            }
            let (stream, ending) = try await openWaits.openEventStream(for: interactionID, source: source)
            // Wakes the wait this one replaces, so that it ends now (this one looks at its approval again).
            if ending != nil { await events.publish(topic, "") }
            return Wait(
                interactionID: interactionID, approvalID: approvalID, mailbox: mailbox, stream: stream,
                end: read.interaction.expiresAt, statusRead: read.status)
        } catch {
            await events.unsubscribe(mailbox)
            throw error
        }
    }

    /// How the approval ended (an interaction that ran out first reads as expired); nil when a newer wait
    /// replaced this one or the server began to stop, so the browser opens another. `opened` runs first,
    /// and `keepAlive` whenever `keepAliveInterval` passes without news; what either throws ends the wait.
    func outcome(
        of wait: Wait, opened: () async throws -> Void, keepAlive: () async throws -> Void
    ) async throws -> ApprovalStatus? {
        var status = ApprovalStatus.pending
        var failure: (any Error)?
        do {
            try await opened()
            if let statusRead = wait.statusRead { status = statusRead } else { status = try await currentStatus(of: wait) }
            while status == .pending, clock.now() < wait.end, !Task.isShuttingDownGracefully {
                let event = await wait.mailbox.nextUnlessStopping(within: Self.keepAliveInterval)
                if event == nil { try await keepAlive() }
                if await openWaits.wasEnded(wait.stream, of: wait.interactionID) { break }
                // The close of this approval says how it ended; any other wake-up means look again.
                if let closed = event.flatMap(ApprovalClosed.init(message:)), closed.approvalID == wait.approvalID {
                    status = closed.status
                } else {
                    status = try await currentStatus(of: wait)
                }
            }
        } catch {
            failure = error
        }
        await events.unsubscribe(wait.mailbox)
        let replaced = await openWaits.closeEventStream(wait.stream, of: wait.interactionID)
        if let failure { throw failure }
        guard !replaced, !Task.isShuttingDownGracefully else { return nil }
        return status == .pending ? .expired : status
    }

    /// The approval's status now; a vanished approval reads as expired.
    private func currentStatus(of wait: Wait) async throws -> ApprovalStatus {
        try await storage.approvals.status(of: wait.approvalID, at: clock.now())
    }
}
