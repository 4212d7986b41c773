import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// Opens the configured database and brings its schema up to date.
///
/// The schema is brought up to date (`SQLiteSchema`, `PostgresSchema`) before the stores use it: on
/// SQLite by the storage's own writer, on PostgreSQL on a connection of its own, closed afterwards.
enum DatabaseSetup {
    /// What opening the database borrows from the running server: the event loops its connections run on.
    struct Runtime: Sendable {
        let eventLoopGroup: any EventLoopGroup
        let logger: Logger
    }

    /// Opens the database at `location`, migrated; with `metrics`, every statement is timed (and its SQL
    /// handed to `observer`, when given).
    static func open(
        _ location: DatabaseLocation, on runtime: Runtime, metrics: ServerMetrics? = nil, observer: (@Sendable (String) -> Void)? = nil
    ) async throws -> Storage {
        switch location {
        case .postgres(let url):
            let configuration = try postgresConfiguration(url)
            do {
                try await migratePostgres(configuration, runtime: runtime)
            } catch {
                throw PostgresStartFailure.explaining(error, url: url)
            }
            let engine = PostgresStorageEngine(
                configuration: limitingStatements(configuration), waitLimit: postgresWaitLimit, answerLimit: postgresAnswerLimit,
                eventLoopGroup: runtime.eventLoopGroup, logger: runtime.logger)
            return Storage(engine: engine, metrics: metrics, observer: observer)
        case .sqliteFile(let path):
            return try await openSQLite(claiming: try SQLiteFileClaim(path: path), on: runtime, metrics: metrics, observer: observer)
        case .sqliteMemory:
            // An ephemeral file, removed at shutdown: GRDB's readers and writer must see the same database.
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-\(UUID().uuidString).sqlite").path
            return try await openSQLite(claiming: try SQLiteFileClaim(path: path, ephemeral: true), on: runtime, metrics: metrics, observer: observer)
        }
    }

    /// For a shared PostgreSQL database, the lock that keeps other instances from starting on it until it
    /// is released (`PostgresStartupLock`); nil for SQLite, where one server holds the file already.
    static func startupLock(for location: DatabaseLocation, on runtime: Runtime) async throws -> PostgresStartupLock? {
        guard case .postgres(let url) = location else { return nil }
        do {
            return try await PostgresStartupLock.acquire(try postgresConfiguration(url), logger: runtime.logger)
        } catch {
            throw PostgresStartFailure.explaining(error, url: url)
        }
    }

    /// The longest a request waits for a PostgreSQL connection, and a connection for PostgreSQL to
    /// answer, before it is refused as `503 database_unavailable`.
    static let postgresWaitLimit = TimeAmount.seconds(5)

    /// The longest one statement of the stores runs on PostgreSQL before PostgreSQL cancels it (its
    /// `statement_timeout`), and the request is refused as `503 database_unavailable` with nothing kept. A
    /// statement stuck behind a lock would otherwise hold its connection, and every request queued for
    /// one, for as long as the lock lasts. The schema versions applied at start run without it: an index built on a large table
    /// may take longer.
    static let postgresStatementLimit = TimeAmount.seconds(10)

    /// The longest the stores wait for PostgreSQL to answer one statement before they close its connection
    /// and the request is refused as `503 database_unavailable`. By then PostgreSQL would have cancelled a
    /// slow statement itself (`postgresStatementLimit`), so only a server that has stopped answering is
    /// still silent: a hung host, or a network that drops packets without closing the connection. The
    /// connection would otherwise wait until the operating system gives up on it, many minutes later.
    static let postgresAnswerLimit = Duration.nanoseconds((postgresStatementLimit + postgresWaitLimit).nanoseconds)

    /// `configuration`, with `postgresStatementLimit` set on every connection it opens.
    private static func limitingStatements(_ configuration: PostgresConnection.Configuration) -> PostgresConnection.Configuration {
        var limited = configuration
        let milliseconds = postgresStatementLimit.nanoseconds / 1_000_000
        limited.options.additionalStartupParameters.append(("statement_timeout", "\(milliseconds)"))
        return limited
    }

    /// The connection settings of a `postgres://` URL, with `postgresWaitLimit` to connect and the TLS
    /// `PostgresTransportSecurity` decides.
    static func postgresConfiguration(_ url: String) throws -> PostgresConnection.Configuration {
        var configuration = try PostgresURL(url).connection(tls: try PostgresTransportSecurity(url: url).tls())
        configuration.options.connectTimeout = postgresWaitLimit
        return configuration
    }

    /// Opens the SQLite file `claim` holds; the claim is released when the storage shuts down, or here if
    /// it cannot open.
    private static func openSQLite(
        claiming claim: SQLiteFileClaim, on runtime: Runtime, metrics: ServerMetrics?, observer: (@Sendable (String) -> Void)?
    ) async throws -> Storage {
        do {
            let engine = try SQLiteStorageEngine(
                path: claim.path, releasingAtShutdown: claim, logger: runtime.logger)
            return Storage(engine: engine, metrics: metrics, observer: observer)
        } catch {
            claim.release()
            throw error
        }
    }

    /// Brings the PostgreSQL schema up to date on a connection of its own, without the stores' statement
    /// limit: an index built on a large table may take longer.
    private static func migratePostgres(_ configuration: PostgresConnection.Configuration, runtime: Runtime) async throws {
        let connection = try await PostgresConnection.connect(
            on: runtime.eventLoopGroup.any(), configuration: configuration, id: 0, logger: runtime.logger)
        do {
            try await PostgresSchema.migrate(on: connection, logger: runtime.logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}
