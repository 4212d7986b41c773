import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Vapor

/// Connects the configured database and brings its schema up to date.
enum DatabaseSetup {
    static func prepare(_ app: Application, location: DatabaseLocation) async throws {
        try use(location, on: app)
        if case .sqliteFile = location {
            // Write-ahead logging lets readers go on while a write commits; the mode is kept in the file.
            try await app.db.storage.sql.raw("PRAGMA journal_mode=WAL").run()
        }
        app.migrations.add(CreateInitialSchema())
        app.migrations.add(SeedDemoApplication())
        app.migrations.add(CreateApprovals())
        app.migrations.add(CreateTransactionEvidence())
        app.migrations.add(CreatePushDelivery())
        app.migrations.add(AddQueryIndexes())
        app.migrations.add(AddPushConfigContractFields())
        try await app.autoMigrate()
    }

    /// Queries are logged with their binds, which hold secrets: only at trace, which the server never logs at.
    static let sqlLogLevel = Logger.Level.trace

    static func use(_ location: DatabaseLocation, on app: Application) throws {
        if case .postgres = location {} else {
            // SQLite runs every statement on a blocking thread, and a writer waiting for another's lock
            // retries on its thread without pause (sqlite-nio's busy handler). On the process-wide pool of
            // one thread per core, waiting writers (of this app or, in tests, of others) can hold every
            // thread while the writer they wait for needs one to finish: a deadlock. The app's own pool
            // has a thread for every connection (one per event loop) and as many to spare.
            app.threadPool = NIOThreadPool(numberOfThreads: 2 * System.coreCount)
        }
        switch location {
        case .sqliteFile(let path):
            app.databases.use(.sqlite(.file(path), sqlLogLevel: sqlLogLevel), as: .sqlite)
        case .sqliteMemory:
            app.databases.use(.sqlite(.memory, sqlLogLevel: sqlLogLevel), as: .sqlite)
        case .postgres(let url):
            app.databases.use(.postgres(configuration: try SQLPostgresConfiguration(url: url), sqlLogLevel: sqlLogLevel), as: .psql)
        }
    }
}
