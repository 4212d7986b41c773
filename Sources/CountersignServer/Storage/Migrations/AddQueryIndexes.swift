import FluentKit
import FluentSQL

/// Indexes for the queries run on every request and by the background workers, so none of them scans
/// a table that grows with traffic.
struct AddQueryIndexes: AsyncMigration {
    /// An index's name, table and columns.
    typealias Index = (name: String, table: String, columns: [String])

    static let indexes: [Index] = [
        ("approvals_device_status", ApprovalStore.table, ["device_id", "status"]),
        ("approvals_expires_at", ApprovalStore.table, ["expires_at"]),
        ("interactions_expires_at", InteractionStore.table, ["expires_at"]),
        ("used_device_signatures_expires_at", UsedDeviceSignatureStore.table, ["expires_at"]),
        ("push_jobs_due", PushJobStore.table, ["status", "next_attempt_at"]),
        ("push_jobs_approval", PushJobStore.table, ["approval_id"]),
        ("push_deliveries_approval", PushJobStore.deliveryTable, ["approval_id"]),
        ("push_deliveries_device", PushJobStore.deliveryTable, ["device_id"]),
        ("devices_user", DeviceStore.table, ["user_id"]),
        ("biometric_keys_user_key", BiometricKeyStore.table, ["user_id", "public_key_id"]),
        ("clients_application", ClientStore.table, ["application_id"]),
    ]

    func prepare(on database: any Database) async throws {
        try await Self.create(Self.indexes, on: database)
    }

    func revert(on database: any Database) async throws {
        try await Self.drop(Self.indexes, on: database)
    }

    static func create(_ indexes: [Index], on database: any Database) async throws {
        let sql = try database.sql
        for index in indexes {
            var builder = sql.create(index: index.name).on(index.table)
            for column in index.columns { builder = builder.column(column) }
            try await builder.run()
        }
    }

    static func drop(_ indexes: [Index], on database: any Database) async throws {
        let sql = try database.sql
        for index in indexes {
            try await sql.drop(index: index.name).run()
        }
    }
}
