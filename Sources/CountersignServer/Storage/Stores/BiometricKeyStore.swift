import Foundation
import Journeys

/// Every statement on `biometric_keys`.
struct BiometricKeyStore {
    static let table = "biometric_keys"
    let db: any SQLExecutor

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
        guard let row = try await db.first(
            Self.activeKey, ExternalUserID.canonical(externalUserID), clientID, publicKeyID, CredentialStatus.active)
        else { return nil }
        return ActiveKey(
            user: try UserRecord(row: row), publicKey: try row["public_key"],
            deviceID: try row["key_device_id"], deviceStatus: try row["key_device_status"])
    }

    /// The user of canonical external id `$1` of the application of client `$2`, with their key `$3` of
    /// status `$4` and the status of its device.
    private static let activeKey = """
        SELECT users.*, bio.public_key, bio.device_id AS key_device_id, dev.status AS key_device_status
        FROM \(UserStore.user("$1", inApplicationOfClient: "$2"))
        JOIN biometric_keys bio ON bio.user_id = users.id AND bio.public_key_id = $3 AND bio.status = $4
        LEFT JOIN devices dev ON dev.id = bio.device_id
        """

    func find(_ id: String) async throws -> BiometricKeyRecord? {
        try await db.first(BiometricKeyRecord.self, "SELECT * FROM biometric_keys WHERE id = $1", id)
    }

    /// All the user's keys, revoked ones too, oldest first.
    func all(ofUser userID: String) async throws -> [BiometricKeyRecord] {
        try await db.all(BiometricKeyRecord.self, "SELECT * FROM biometric_keys WHERE user_id = $1 ORDER BY created_at", userID)
    }

    /// Revokes the active keys registered with device `deviceID`, as the device is revoked.
    func revoke(onDevice deviceID: String, at now: Date) async throws {
        try await CredentialStatus.revoke(deviceID, with: Self.revocationOnDevice, at: now, on: db)
    }

    private static let revocationOnDevice = CredentialStatus.revocation(in: "biometric_keys", by: "device_id")

    /// Adds `key`, revoking the user's active key of the same `public_key_id` it replaces.
    func replace(with key: BiometricKeyRecord, at now: Date) async throws {
        try await db.run("""
            UPDATE biometric_keys SET status = $1, revoked_at = $2
            WHERE user_id = $3 AND public_key_id = $4 AND status = $5
            """, CredentialStatus.revoked, now, key.userID, key.publicKeyID, CredentialStatus.active)
        try await db.run("""
            INSERT INTO biometric_keys (id, user_id, public_key_id, public_key, key_family, os, device_id, status, created_at, revoked_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            """,
            key.id, key.userID, key.publicKeyID, key.publicKey, key.keyFamily, key.os, key.deviceID, key.status,
            key.createdAt, key.revokedAt)
    }

    /// Revokes the key if it is active; revoking again changes nothing.
    func revoke(_ id: String, at now: Date) async throws {
        try await CredentialStatus.revoke(id, with: Self.revocation, at: now, on: db)
    }

    private static let revocation = CredentialStatus.revocation(in: "biometric_keys")
}
