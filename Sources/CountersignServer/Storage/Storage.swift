import Fluent
import FluentSQL

/// The database as the services use it: one store per table, the only place with SQL. The same stores
/// run on SQLite and PostgreSQL, through SQLKit.
struct Storage: Sendable {
    let sql: any SQLDatabase

    /// `database` as storage; both supported drivers are SQL databases.
    init(_ database: any Database) throws {
        guard let sql = database as? any SQLDatabase else { throw DatabaseNotSQL() }
        self.sql = sql
    }

    var interactions: InteractionStore { InteractionStore(sql: sql) }
    var approvals: ApprovalStore { ApprovalStore(sql: sql) }
    var users: UserStore { UserStore(sql: sql) }
    var devices: DeviceStore { DeviceStore(sql: sql) }
    var biometricKeys: BiometricKeyStore { BiometricKeyStore(sql: sql) }
    var clients: ClientStore { ClientStore(sql: sql) }
    var usedDeviceSignatures: UsedDeviceSignatureStore { UsedDeviceSignatureStore(sql: sql) }
    var pushJobs: PushJobStore { PushJobStore(sql: sql) }
    var pushConfigs: PushConfigStore { PushConfigStore(sql: sql) }
    var signingKeys: SigningKeyStore { SigningKeyStore(sql: sql) }
    var serverSecrets: ServerSecretStore { ServerSecretStore(sql: sql) }
    var evidence: EvidenceStore { EvidenceStore(sql: sql) }
    var retention: RetentionStore { RetentionStore(sql: sql) }
    var statistics: StatisticsStore { StatisticsStore(sql: sql) }
}

extension Database {
    /// This database's stores.
    var storage: Storage {
        get throws { try Storage(self) }
    }
}

/// Runs `write`; a unique key it would break refuses the request as `already_exists` (409) with `message`.
/// The database's key decides, so two racing requests cannot both pass a check made before.
func refusingDuplicate(_ message: @autoclosure () -> String, _ write: () async throws -> Void) async throws {
    do {
        try await write()
    } catch let error as any DatabaseError where error.isConstraintFailure {
        throw ServiceError.alreadyExists(message())
    }
}

/// The configured database does not speak SQL.
struct DatabaseNotSQL: Error, CustomStringConvertible {
    var description: String { "Countersign needs an SQL database (SQLite or PostgreSQL)." }
}
