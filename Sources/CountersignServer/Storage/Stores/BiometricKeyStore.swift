import SQLKit
import Foundation

/// Every statement on `biometric_keys`.
struct BiometricKeyStore {
    static let table = "biometric_keys"
    let sql: any SQLDatabase

    /// An active key with its user and the status of the device it is bound to, if any.
    struct ActiveKey {
        let user: UserRecord
        let publicKey: String
        let deviceID: String?
        let deviceStatus: String?
    }

    /// The active key `publicKeyID` of user `externalUserID` of the application of client `clientID`,
    /// with the user and the key's device status, in one query: what a biometric answer is checked with.
    func active(externalUserID: String, inApplicationOfClient clientID: String, publicKeyID: String) async throws -> ActiveKey? {
        guard let row = try await sql.raw("""
            SELECT users.*, bio.public_key, bio.device_id AS key_device_id, dev.status AS key_device_status
            FROM \(UserStore.user(externalUserID, inApplicationOfClient: clientID))
            JOIN \(name: Self.table) bio ON bio.user_id = users.id AND bio.public_key_id = \(bind: publicKeyID)
                AND bio.status = \(bind: CredentialStatus.active.rawValue)
            LEFT JOIN \(name: DeviceStore.table) dev ON dev.id = bio.device_id
            """).first()
        else { return nil }
        return ActiveKey(
            user: try row.decode(model: UserRecord.self), publicKey: try row.decode(column: "public_key", as: String.self),
            deviceID: try row.decode(column: "key_device_id", as: String?.self),
            deviceStatus: try row.decode(column: "key_device_status", as: String?.self))
    }

    func find(_ id: String) async throws -> BiometricKeyRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: id)").first(decoding: BiometricKeyRecord.self)
    }

    /// All the user's keys, revoked ones too, oldest first.
    func all(ofUser userID: String) async throws -> [BiometricKeyRecord] {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE user_id = \(bind: userID) ORDER BY created_at")
            .all(decoding: BiometricKeyRecord.self)
    }

    /// Revokes the active keys registered with device `deviceID`, as the device is revoked.
    func revoke(onDevice deviceID: String, at now: Date) async throws {
        try await sql.raw("""
            UPDATE \(name: Self.table) SET status = \(bind: CredentialStatus.revoked.rawValue), revoked_at = \(bind: now)
            WHERE device_id = \(bind: deviceID) AND status = \(bind: CredentialStatus.active.rawValue)
            """).run()
    }

    /// Adds `key`, revoking the user's active key of the same `public_key_id` it replaces.
    func replace(with key: BiometricKeyRecord, at now: Date) async throws {
        try await sql.raw("""
            UPDATE \(name: Self.table) SET status = \(bind: CredentialStatus.revoked.rawValue), revoked_at = \(bind: now)
            WHERE user_id = \(bind: key.userID) AND public_key_id = \(bind: key.publicKeyID)
                AND status = \(bind: CredentialStatus.active.rawValue)
            """).run()
        try await sql.insert(key, into: Self.table).run()
    }

    func revoke(_ id: String, at now: Date) async throws {
        try await revokeCredential(id, in: Self.table, at: now, on: sql)
    }
}
