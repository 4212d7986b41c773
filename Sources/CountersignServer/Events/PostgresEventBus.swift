import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Wake-ups across every instance on one PostgreSQL database, through `LISTEN`/`NOTIFY`.
///
/// A publish wakes this instance's subscribers at once and sends a `NOTIFY` on one channel; each
/// instance holds one connection of its own that listens on it and hands what it hears from the others
/// to its local subscribers. That connection is checked every few seconds and reconnected with backoff
/// when lost; once it listens again every local waiter is woken to re-read its state, so an event missed
/// during the gap costs nothing.
final class PostgresEventBus: EventBus, ServerLifecycle {
    static let channel = "countersign_events"
    /// How often the listening connection is checked when nothing arrives.
    static let heartbeat = Duration.seconds(5)
    static let firstRetry = Duration.milliseconds(100)
    static let longestRetry = Duration.seconds(5)

    private let local = InProcessEventBus()
    private let configuration: PostgresConnection.Configuration
    /// Where `NOTIFY` is sent from: the storage's pool.
    private let storage: Storage
    private let logger: Logger
    /// Tells this instance's own notifications, already delivered locally, from the others'.
    private let instanceID = UUID().uuidString
    private let listening = Mutex(false)
    private let loop = ServerLifetimeTask()

    init(configuration: PostgresConnection.Configuration, storage: Storage, logger: Logger) {
        self.configuration = configuration
        self.storage = storage
        self.logger = logger
    }

    var isConnected: Bool { listening.withLock { $0 } }

    func subscribe(_ topic: String) async -> EventMailbox {
        await local.subscribe(topic)
    }

    func unsubscribe(_ mailbox: EventMailbox) async {
        await local.unsubscribe(mailbox)
    }

    /// Wakes this instance's subscribers, then the other instances'. A notification that cannot be sent
    /// (the database is away) is only logged: the others re-read everything when they reconnect.
    func publish(_ topic: String, _ message: String) async {
        await local.publish(topic, message)
        let payload = [instanceID, topic, message].joined(separator: " ")
        do {
            try await storage.db.run("SELECT pg_notify($1, $2)", Self.channel, payload)
        } catch {
            logger.warning("an event could not be sent to the other instances", metadata: ["topic": "\(topic)", "error": "\(error)"])
        }
    }

    // MARK: Listening

    func didBoot() throws {
        loop.start { await self.listen() }
    }

    func shutdown() async {
        await loop.stop()
    }

    /// Holds the listening connection for as long as the server runs, reconnecting with doubling pauses.
    private func listen() async {
        var retry = Self.firstRetry
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
                do {
                    try await connection.listen(on: Self.channel) { notifications in
                        listening.withLock { $0 = true }
                        retry = Self.firstRetry
                        logger.info("listening for other instances' events")
                        await local.wakeAll()
                        try await relay(notifications, checking: connection)
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch where !Task.isCancelled {
                if listening.withLock({ $0 }) || retry == Self.firstRetry {
                    logger.warning("not hearing other instances' events; reconnecting", metadata: ["error": "\(error)"])
                }
            } catch {}
            listening.withLock { $0 = false }
            try? await Task.sleep(for: retry)
            retry = min(retry * 2, Self.longestRetry)
        }
    }

    /// Hands each notification from another instance to the local subscribers until the connection fails
    /// (noticed by a failed heartbeat at the latest) or the server stops.
    private func relay(_ notifications: PostgresNotificationSequence, checking connection: PostgresConnection) async throws {
        let (local, instanceID, logger) = (local, instanceID, logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await notification in notifications {
                    let parts = notification.payload.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
                    guard parts.count == 3, parts[0] != instanceID else { continue }
                    await local.publish(String(parts[1]), String(parts[2]))
                }
                throw ListeningEnded()
            }
            group.addTask {
                while true {
                    try await Task.sleep(for: Self.heartbeat)
                    try await connection.query("SELECT 1", logger: logger)
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    private struct ListeningEnded: Error {}
}
