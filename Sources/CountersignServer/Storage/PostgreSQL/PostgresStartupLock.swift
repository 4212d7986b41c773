import Logging
import PostgresNIO
import Synchronization

/// One instance at a time brings a shared PostgreSQL database up and settles its first secrets: the
/// schema, the demo application, the token signing key, the admin key and the server secrets. Without it,
/// instances started together on an empty database would each apply the schema (one failing on a table the
/// other had just made) and each generate an admin key, of which one would then stop working.
///
/// A session advisory lock on a connection of its own, held from before the schema is applied until the start
/// has settled what it needs (`release()`), or until the connection closes (a start that failed).
final class PostgresStartupLock: ServerLifecycle {
    /// The lock's number: any constant the instances share ("CSUP").
    private static let key = 0x4353_5550

    private let connection: PostgresConnection
    private let released = Mutex(false)

    private init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Waits until no other instance is starting on the database `configuration` names, then holds the lock.
    static func acquire(_ configuration: PostgresConnection.Configuration, logger: Logger) async throws -> PostgresStartupLock {
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        do {
            _ = try await connection.query("SELECT pg_advisory_lock(\(Self.key))", logger: logger).collect()
        } catch {
            try? await connection.close()
            throw error
        }
        return PostgresStartupLock(connection: connection)
    }

    /// Lets the next instance start; closing the connection ends its session, and with it the lock.
    func release() async {
        guard !released.withLock({ released in defer { released = true }; return released }) else { return }
        try? await connection.close()
    }

    func shutdown() async {
        await release()
    }
}
