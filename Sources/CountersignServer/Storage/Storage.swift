import Foundation
import GRDB
import PostgresNIO

/// The database as the services use it: one store per table, the only place with SQL. The same stores,
/// each statement fixed text (`BoundStatement`), run on SQLite (GRDB) and PostgreSQL (PostgresNIO).
struct Storage: Sendable {
    private let engine: any StorageEngine
    /// The connection of the transaction this storage runs in, if any.
    private let session: (any SQLExecutor)?
    /// Times every statement, when given.
    private let metrics: ServerMetrics?
    /// Sees the SQL of every statement, when given (`TimedExecutor`).
    private let observer: (@Sendable (String) -> Void)?

    init(engine: any StorageEngine, metrics: ServerMetrics?, observer: (@Sendable (String) -> Void)? = nil) {
        self.engine = engine
        self.metrics = metrics
        self.observer = observer
        session = nil
    }

    private init(engine: any StorageEngine, session: any SQLExecutor, metrics: ServerMetrics?, observer: (@Sendable (String) -> Void)?) {
        self.engine = engine
        self.session = session
        self.metrics = metrics
        self.observer = observer
    }

    /// Where a statement goes now: the transaction's connection, or the engine's for the calling thread.
    var db: any SQLExecutor {
        let database = session ?? engine.executor
        guard let metrics else { return database }
        return TimedExecutor(base: database, metrics: metrics, observer: observer)
    }

    /// Commits a call's writes in one transaction: in their order, or, where the engine can and the writes
    /// are all statements, as one statement (`OneStatementCommit`, whose statements must not touch one
    /// row twice). A statement that must change a row and changed none rolls them all back and throws its
    /// refusal (the first such one, in order); once committed, each statement is told whether it changed a row.
    func commit(_ writes: [DeferredWrite]) async throws {
        let statements = writes.compactMap(\.statement)
        let outcomes: [Bool]
        do {
            if writes.count == 1, let statement = statements.first {
                outcomes = [try await db.run(statement)]
            } else if statements.count == writes.count, statements.count > 1, engine.commitsStatementsAsOne, Self.changeDistinctRows(statements) {
                outcomes = try await OneStatementCommit.run(statements, on: db)
            } else if !writes.isEmpty {
                outcomes = try await transaction { storage in
                    var outcomes: [Bool] = []
                    for write in writes {
                        switch write {
                        case .statement(let statement): outcomes.append(try await storage.db.run(statement))
                        case .code(let body): try await body(storage)
                        }
                    }
                    return outcomes
                }
            } else {
                outcomes = []
            }
        } catch let refused as DeferredStatementRefused {
            throw try await refused.refusal(self)
        }
        for (statement, changed) in zip(statements, outcomes) { await statement.outcome?(changed) }
    }

    /// Whether no two of `statements` name the same row: statements run as one see the same snapshot, so
    /// two on one row must run one after another instead (`OneStatementCommit`).
    private static func changeDistinctRows(_ statements: [DeferredStatement]) -> Bool {
        let rows = statements.compactMap(\.row)
        return Set(rows).count == rows.count
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (Storage) async throws -> T) async throws -> T {
        let (engine, metrics) = (engine, metrics)
        return try await engine.transaction { executor in try await body(Storage(engine: engine, session: executor, metrics: metrics, observer: observer)) }
    }

    func shutdown() async throws {
        try await engine.shutdown()
    }

    /// Writes a copy of the whole database into `directory`, as of one commit, while calls go on.
    func writeBackup(into directory: String, at time: Date) async throws -> DatabaseBackup {
        try await engine.writeBackup(into: directory, at: time)
    }

    var interactions: InteractionStore { InteractionStore(db: db) }
    var idempotentReplays: IdempotentReplayStore { IdempotentReplayStore(db: db) }
    var approvals: ApprovalStore { ApprovalStore(db: db) }
    var users: UserStore { UserStore(db: db) }
    var memberships: MembershipStore { MembershipStore(db: db) }
    var devices: DeviceStore { DeviceStore(db: db) }
    var biometricKeys: BiometricKeyStore { BiometricKeyStore(db: db) }
    var clients: ClientStore { ClientStore(db: db) }
    var cibaRequests: CIBARequestStore { CIBARequestStore(db: db) }
    var applicationOrigins: ApplicationOriginStore { ApplicationOriginStore(db: db) }
    var usedDeviceSignatures: UsedDeviceSignatureStore { UsedDeviceSignatureStore(db: db) }
    var pushJobs: PushJobStore { PushJobStore(db: db) }
    var pushConfigs: PushConfigStore { PushConfigStore(db: db) }
    var signingKeys: SigningKeyStore { SigningKeyStore(db: db) }
    var serverSecrets: ServerSecretStore { ServerSecretStore(db: db) }
    var evidence: EvidenceStore { EvidenceStore(db: db) }
    var enrollmentCodes: EnrollmentCodeStore { EnrollmentCodeStore(db: db) }
    var securityEvents: SecurityEventStore { SecurityEventStore(db: db) }
    var retention: RetentionStore { RetentionStore(db: db) }
    var browserCredentials: BrowserCredentialStore { BrowserCredentialStore(db: db) }
    var statistics: StatisticsStore { StatisticsStore(db: db) }
    var operators: OperatorStore { OperatorStore(db: db) }
    var consoleSessions: ConsoleSessionStore { ConsoleSessionStore(db: db) }
}

/// Where the stores' SQL runs, and how a transaction holds its connection.
protocol StorageEngine: Sendable {
    /// Statements outside any transaction, from the calling thread.
    var executor: any SQLExecutor { get }
    /// Whether a call's deferred statements can be committed as one statement (`OneStatementCommit`).
    var commitsStatementsAsOne: Bool { get }
    /// Runs `body` on one connection in one transaction: committed when it returns, rolled back when it throws.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> T) async throws -> T
    /// Writes a copy of the whole database into `directory`, named after `time`; refused where the
    /// database's own tools do it (PostgreSQL).
    func writeBackup(into directory: String, at time: Date) async throws -> DatabaseBackup
    func shutdown() async throws
}

/// A backup the server wrote: its file, its size, and when it began (the time its name gives).
struct DatabaseBackup: Sendable {
    let path: String
    let bytes: Int64
    let createdAt: Date
}

extension SQLExecutor {
    /// Runs `body` between `begin` and `COMMIT` on this connection, which the caller holds for the
    /// transaction; rolls back when the body or the commit throws, and runs `rollbackFailed` when the
    /// rollback throws too. Both engines write these statements themselves: PostgresNIO's
    /// `withTransaction` would wrap the body's errors in its own type and hide the services' typed errors.
    func runTransaction<T>(
        begin: String = "BEGIN", _ body: () async throws -> T, rollbackFailed: () async -> Void = {}
    ) async throws -> T {
        try await run(begin)
        do {
            let result = try await body()
            try await run("COMMIT")
            return result
        } catch {
            do {
                try await run("ROLLBACK")
            } catch {
                await rollbackFailed()
            }
            throw error
        }
    }
}

/// Runs `write`; a unique key it would break refuses the request as `already_exists` (409) with `message`.
/// The database's key decides, so two racing requests cannot both pass a check made before.
func refusingDuplicate(_ message: @autoclosure () -> String, _ write: () async throws -> Void) async throws {
    do {
        try await write()
    } catch where isConstraintFailure(error) {
        throw ServiceError.alreadyExists(message())
    }
}

/// Whether `error` is a write refused by a constraint of the schema (a unique key, say), on either database.
func isConstraintFailure(_ error: any Error) -> Bool {
    switch error {
    case let error as GRDB.DatabaseError: error.resultCode == .SQLITE_CONSTRAINT
    // SQLSTATE class 23: integrity constraint violation.
    case let error as PSQLError: error.serverInfo?[.sqlState]?.hasPrefix("23") == true
    default: false
    }
}
