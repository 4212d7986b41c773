import FluentKit
import FluentPostgresDriver
import FluentSQLiteDriver
import Foundation
import Logging
import NIOCore
import NIOPosix

/// Opens the configured database and brings its schema up to date.
///
/// Migrations run through Fluent's schema builder, on Fluent's own connections, which are closed before
/// the stores open theirs. On SQLite that matters beyond tidiness: two copies of the SQLite library must
/// never have one file open at once, or their locks would not see each other.
enum DatabaseSetup {
    /// What opening the database borrows from the running server: Fluent's migrations run on its thread
    /// pool and event loops, and the stores' connections on its event loops.
    struct Runtime: Sendable {
        let threadPool: NIOThreadPool
        let eventLoopGroup: any EventLoopGroup
        let logger: Logger
    }

    /// Opens the database at `location`, migrated; with `metrics`, every statement is timed.
    static func open(_ location: DatabaseLocation, on runtime: Runtime, metrics: ServerMetrics? = nil) async throws -> Storage {
        switch location {
        case .postgres(let url):
            let configuration = try postgresConfiguration(url)
            let migrating = Databases(threadPool: runtime.threadPool, on: runtime.eventLoopGroup)
            migrating.use(.postgres(configuration: configuration, sqlLogLevel: sqlLogLevel), as: .psql)
            do {
                try await migrateThenClose(migrating, runtime: runtime)
            } catch {
                throw PostgresStartFailure.explaining(error, url: url)
            }
            let engine = PostgresStorageEngine(
                configuration: limitingStatements(configuration), waitLimit: postgresWaitLimit, answerLimit: postgresAnswerLimit,
                eventLoopGroup: runtime.eventLoopGroup, logger: runtime.logger)
            return Storage(engine: engine, metrics: metrics)
        case .sqliteFile(let path):
            return try await openSQLite(claiming: try SQLiteFileClaim(path: path), on: runtime, metrics: metrics)
        case .sqliteMemory:
            // An ephemeral file, removed at shutdown: the migrations and GRDB must see the same database.
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-\(UUID().uuidString).sqlite").path
            return try await openSQLite(claiming: try SQLiteFileClaim(path: path, ephemeral: true), on: runtime, metrics: metrics)
        }
    }

    /// For a shared PostgreSQL database, the lock that keeps other instances from starting on it until it
    /// is released (`PostgresStartupLock`); nil for SQLite, where one server holds the file already.
    static func startupLock(for location: DatabaseLocation, on runtime: Runtime) async throws -> PostgresStartupLock? {
        guard case .postgres(let url) = location else { return nil }
        do {
            return try await PostgresStartupLock.acquire(try postgresConfiguration(url).coreConfiguration, logger: runtime.logger)
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
    /// one, for as long as the lock lasts. The migrations run without it: an index built on a large table
    /// may take longer.
    static let postgresStatementLimit = TimeAmount.seconds(10)

    /// The longest the stores wait for PostgreSQL to answer one statement before they close its connection
    /// and the request is refused as `503 database_unavailable`. By then PostgreSQL would have cancelled a
    /// slow statement itself (`postgresStatementLimit`), so only a server that has stopped answering is
    /// still silent: a hung host, or a network that drops packets without closing the connection. The
    /// connection would otherwise wait until the operating system gives up on it, many minutes later.
    static let postgresAnswerLimit = Duration.nanoseconds((postgresStatementLimit + postgresWaitLimit).nanoseconds)

    /// `configuration`, with `postgresStatementLimit` set on every connection it opens.
    private static func limitingStatements(_ configuration: SQLPostgresConfiguration) -> SQLPostgresConfiguration {
        var limited = configuration
        let milliseconds = postgresStatementLimit.nanoseconds / 1_000_000
        limited.coreConfiguration.options.additionalStartupParameters.append(("statement_timeout", "\(milliseconds)"))
        return limited
    }

    /// The connection settings of a `postgres://` URL, with `postgresWaitLimit` to connect and the TLS
    /// `PostgresTransportSecurity` decides.
    static func postgresConfiguration(_ url: String) throws -> SQLPostgresConfiguration {
        var configuration = try SQLPostgresConfiguration(url: url)
        configuration.coreConfiguration.tls = try PostgresTransportSecurity(url: url).tls()
        configuration.coreConfiguration.options.connectTimeout = postgresWaitLimit
        return configuration
    }

    /// Opens the SQLite file `claim` holds; the claim is released when the storage shuts down, or here if
    /// it cannot open.
    private static func openSQLite(claiming claim: SQLiteFileClaim, on runtime: Runtime, metrics: ServerMetrics?) async throws -> Storage {
        let path = claim.path
        do {
            let migrating = Databases(threadPool: runtime.threadPool, on: runtime.eventLoopGroup)
            migrating.use(.sqlite(.file(path), sqlLogLevel: sqlLogLevel), as: .sqlite)
            try await migrateThenClose(migrating, runtime: runtime)
            let engine = try SQLiteStorageEngine(
                path: path, releasingAtShutdown: claim, logger: runtime.logger, eventLoop: runtime.eventLoopGroup.any())
            return Storage(engine: engine, metrics: metrics)
        } catch {
            claim.release()
            throw error
        }
    }

    /// Runs the migrations on Fluent's connections, which close afterwards: the stores use their own.
    private static func migrateThenClose(_ databases: Databases, runtime: Runtime) async throws {
        do {
            try await migrate(databases, runtime: runtime)
        } catch {
            await databases.shutdownAsync()
            throw error
        }
        await databases.shutdownAsync()
    }

    private static func migrate(_ databases: Databases, runtime: Runtime) async throws {
        let migrations = Migrations()
        migrations.add(CreateInitialSchema())
        migrations.add(CreateApprovals())
        migrations.add(CreateTransactionEvidence())
        migrations.add(CreatePushDelivery())
        migrations.add(AddQueryIndexes())
        migrations.add(AddPushConfigContractFields())
        migrations.add(CreateEnrollmentCodes())
        migrations.add(CreateSecurityEvents())
        migrations.add(AddRequestContextAndInteractionUser())
        migrations.add(CreateUserApplications())
        migrations.add(CreateApplicationOrigins())
        migrations.add(CreateDecoyApprovals())
        migrations.add(AddInteractionApproval())
        migrations.add(DropInteractionApproval())
        migrations.add(CreateHeldStatementCheck())
        migrations.add(AddApprovalSubjectSequence())
        migrations.add(AddEvidenceSeal())
        migrations.add(LowerCaseEmailUserIDs())
        migrations.add(AddListingIndexes())
        migrations.add(CreateKeptAnswers())
        migrations.add(AddApprovalSource())
        migrations.add(AddApplicationJourneys())
        migrations.add(AddEnrollmentCodeApplication())
        migrations.add(AddSigningKeyActivation())
        let migrator = Migrator(databases: databases, migrations: migrations, logger: runtime.logger, on: runtime.eventLoopGroup.any())
        try await migrator.setupIfNeeded().flatMap { migrator.prepareBatch() }.get()
    }

    /// Queries are logged with their binds, which hold secrets: only at trace, which the server never logs at.
    static let sqlLogLevel = Logger.Level.trace
}

extension FluentKit.Database {
    /// This database as SQL, for the migrations' statements beyond the schema builder.
    var sql: any SQLDatabase {
        get throws {
            guard let sql = self as? any SQLDatabase else { throw DatabaseNotSQL() }
            return sql
        }
    }
}
