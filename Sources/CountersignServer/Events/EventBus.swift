import CountersignCore
import Foundation
import Journeys
import NIOCore
import ServiceLifecycle

/// Wakes whoever waits on a topic: a browser's events stream on `interaction:<id>`, a device's inbox
/// long-poll on `device:<id>`, the push sender on `push-queue`. In-process on SQLite; on PostgreSQL
/// `PostgresEventBus` carries each event to every instance.
///
/// An event says "look again": a waiter re-reads its state from the database when woken, so a spurious
/// wake-up costs one read and a lost one costs at most the waiter's next timed look. The exceptions are
/// published only once what they report is committed, and taken as they are: `ApprovalClosed` by a
/// browser's events stream, `ApprovalRung` by a phone's inbox long-poll.
protocol EventBus: Sendable {
    /// Starts listening on `topic`; events published after this call are kept for the mailbox.
    func subscribe(_ topic: String) async -> EventMailbox
    /// Stops delivering to `mailbox`.
    func unsubscribe(_ mailbox: EventMailbox) async
    func publish(_ topic: String, _ message: String) async
    /// Whether events from other instances reach this one now (always, with one instance).
    var isConnected: Bool { get }
}

/// Topics, named in one place.
enum EventTopic {
    static func interaction(_ id: String) -> String { "interaction:\(id)" }
    static func device(_ id: String) -> String { "device:\(id)" }
    /// Rung when a push is queued or a send finishes.
    static let pushQueue = "push-queue"
    /// Rung when a backend client's approval closes: its ping may be due.
    static let cibaPings = "ciba-pings"
}

/// The message published on the waiting browser's interaction topic once an approval's close is
/// committed: the approval and the status it was closed with, which a closed approval keeps.
struct ApprovalClosed: Equatable {
    let approvalID: String
    let status: ApprovalStatus

    var message: String { "closed \(approvalID) \(status.rawValue)" }
}

extension ApprovalClosed {
    /// The event in `message`; nil for any other message ("look again").
    init?(message: String) {
        let parts = message.split(separator: " ")
        guard parts.count == 3, parts[0] == "closed", let status = ApprovalStatus(rawValue: String(parts[2])) else { return nil }
        self.init(approvalID: String(parts[1]), status: status)
    }
}

/// The message published on a device's topic once an approval pushed to it is committed: the push's
/// payload, which the device's waiting inbox long-poll answers without reading it again.
struct ApprovalRung: Equatable {
    let payload: [String: String]

    var message: String { JSONEncoder.wire.text(.object(payload.mapValues { .string($0) })) }
}

extension ApprovalRung {
    /// The event in `message`; nil for any other message ("look again").
    init?(message: String) {
        guard let payload = try? JSONDecoder.wire.decode([String: String].self, from: Data(message.utf8)) else { return nil }
        self.init(payload: payload)
    }
}

/// The events of one subscription, read one at a time with a time limit (an `eventLoopTimer`, cancelled
/// when an event comes first).
actor EventMailbox {
    nonisolated let topic: String
    private var buffered: [String] = []
    private var waiter: (number: UInt64, continuation: CheckedContinuation<String?, Never>, timeout: Scheduled<Void>)?
    /// How many waits have begun, which numbers each.
    private var waits: UInt64 = 0

    init(topic: String) {
        self.topic = topic
    }

    func deliver(_ message: String) {
        if let waiter {
            self.waiter = nil
            waiter.timeout.cancel()
            waiter.continuation.resume(returning: message)
        } else {
            buffered.append(message)
        }
    }

    /// The next event, or nil when none arrives within `limit` or the waiting task is cancelled.
    func next(within limit: Duration) async -> String? {
        if !buffered.isEmpty { return buffered.removeFirst() }
        guard !Task.isCancelled else { return nil }
        waits += 1
        let number = waits
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let timeout = eventLoopTimer(after: limit) { [weak self] in
                    Task { await self?.expire(number) }
                }
                waiter = (number, continuation, timeout)
            }
        } onCancel: {
            // Runs on the actor after the wait above was set up: the wait is this actor's until it suspends.
            Task { await self.expire(number) }
        }
    }

    private func expire(_ number: UInt64) {
        guard let waiter, waiter.number == number else { return }
        self.waiter = nil
        waiter.timeout.cancel()
        waiter.continuation.resume(returning: nil)
    }
}

/// The single-instance bus: subscribers are mailboxes in this process.
actor InProcessEventBus: EventBus {
    nonisolated var isConnected: Bool { true }

    private var subscribers: [String: [ObjectIdentifier: EventMailbox]] = [:]

    func subscribe(_ topic: String) -> EventMailbox {
        let mailbox = EventMailbox(topic: topic)
        subscribers[topic, default: [:]][ObjectIdentifier(mailbox)] = mailbox
        return mailbox
    }

    func unsubscribe(_ mailbox: EventMailbox) {
        subscribers[mailbox.topic]?.removeValue(forKey: ObjectIdentifier(mailbox))
        if subscribers[mailbox.topic]?.isEmpty == true { subscribers[mailbox.topic] = nil }
    }

    func publish(_ topic: String, _ message: String) async {
        for mailbox in subscribers[topic]?.values ?? [:].values {
            await mailbox.deliver(message)
        }
    }

    /// Wakes every subscriber of every topic, so each re-reads its state (after events may have been missed).
    func wakeAll() async {
        for mailbox in subscribers.values.flatMap(\.values) {
            await mailbox.deliver("")
        }
    }
}

extension EventMailbox {
    /// The next event within `limit`; nil at once when the server begins to stop, so that no open wait
    /// (an events stream, an inbox long-poll) holds its shutdown.
    func nextUnlessStopping(within limit: Duration) async -> String? {
        await cancelWhenGracefulShutdown { await self.next(within: limit) }
    }
}
