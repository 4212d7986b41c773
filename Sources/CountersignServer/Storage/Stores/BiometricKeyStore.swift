import FluentSQL
import Foundation

/// Every statement on `biometric_keys`.
struct BiometricKeyStore {
    static let table = "biometric_keys"
    let sql: any SQLDatabase

    /// An active key with the status of the device it is bound to, if any.
    struct ActiveKey: Decodable {
        let publicKey: String
        let deviceID: String?
        let deviceStatus: String?

        enum CodingKeys: String, CodingKey {
            case publicKey = "public_key"
            case deviceID = "device_id"
            case deviceStatus = "device_status"
        }
    }

    /// The user's active key `publicKeyID` and its device's status, in one query.
    func active(userID: String, publicKeyID: String) async throws -> ActiveKey? {
        try await sql.raw("""
            SELECT bio.public_key, bio.device_id, dev.status AS device_status
            FROM \(ident: Self.table) bio LEFT JOIN \(ident: DeviceStore.table) dev ON dev.id = bio.device_id
            WHERE bio.user_id = \(bind: userID) AND bio.public_key_id = \(bind: publicKeyID)
                AND bio.status = \(bind: CredentialStatus.active.rawValue)
            """).first(decoding: ActiveKey.self)
    }

    func find(_ id: String) async throws -> BiometricKeyRecord? {
        try await sql.raw("SELECT * FROM \(ident: Self.table) WHERE id = \(bind: id)").first(decoding: BiometricKeyRecord.self)
    }

    /// All the user's keys, revoked ones too, oldest first.
    func all(ofUser userID: String) async throws -> [BiometricKeyRecord] {
        try await sql.raw("SELECT * FROM \(ident: Self.table) WHERE user_id = \(bind: userID) ORDER BY created_at")
            .all(decoding: BiometricKeyRecord.self)
    }

    /// Adds `key`, revoking the user's active key of the same `public_key_id` it replaces.
    func replace(with key: BiometricKeyRecord, at now: Date) async throws {
        try await sql.raw("""
            UPDATE \(ident: Self.table) SET status = \(bind: CredentialStatus.revoked.rawValue), revoked_at = \(bind: now)
            WHERE user_id = \(bind: key.userID) AND public_key_id = \(bind: key.publicKeyID)
                AND status = \(bind: CredentialStatus.active.rawValue)
            """).run()
        try await sql.insert(into: Self.table).model(key).run()
    }

    /// Binds the keys `ids` to the device they live on.
    func bind(_ ids: [String], toDevice deviceID: String) async throws {
        guard !ids.isEmpty else { return }
        try await sql.update(Self.table).set("device_id", to: deviceID).where("id", .in, ids).run()
    }

    func revoke(_ id: String, at now: Date) async throws {
        try await revokeCredential(id, in: Self.table, at: now, on: sql)
    }
}
