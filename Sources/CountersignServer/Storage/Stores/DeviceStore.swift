import Foundation
import Journeys

/// Every statement on `devices`.
struct DeviceStore {
    static let table = "devices"
    let db: any SQLExecutor

    func find(_ id: String) async throws -> DeviceRecord? {
        try await db.first(DeviceRecord.self, "SELECT * FROM devices WHERE id = $1", id)
    }

    /// Whom web client `clientID`'s request for `externalUserID` goes to.
    struct Addressees {
        let application: ClientStore.WebClientApplication
        /// The user `externalUserID`, when they are a user of that application.
        let user: UserRecord?
        /// The user's active devices, newest first.
        let devices: [DeviceRecord]
        /// The id of the user `externalUserID` names in any application: whose approvals elsewhere the
        /// push-fatigue limits count when this application has no phone to ask.
        let identifierOwnerID: String?
    }

    /// Whom web client `clientID`'s request for `externalUserID` goes to, in one query: the client's
    /// application, that user of it with their active devices, and the user of that id in any application;
    /// nil when the web client does not exist.
    func active(ofUser externalUserID: String, inApplicationOfClient clientID: String) async throws -> Addressees? {
        let rows = try await db.all(Self.activeOfUser, clientID, ExternalUserID.canonical(externalUserID), CredentialStatus.active)
        guard let first = rows.first else { return nil }
        return Addressees(
            application: try ClientStore.webClientApplication(in: first),
            user: try first.isNull("id") ? nil : try UserRecord(row: first),
            devices: try rows.compactMap { try DeviceRecord(joinedIn: $0, prefix: Self.devicePrefix) },
            identifierOwnerID: try first["identifier_owner_id"])
    }

    /// One row per device, or one with no device (and no user): web client `$1` and its application, the
    /// user of canonical external id `$2` if they belong to it, with their devices of status `$3`, and the
    /// id of the user `$2` in any application. The device's columns are renamed, as a user has some of the
    /// same names.
    private static let activeOfUser = """
        SELECT users.*, owner.id AS identifier_owner_id, \(ClientStore.webClientApplicationColumns),
            \(DeviceRecord.columns(of: "dev", prefixedWith: devicePrefix))
        FROM \(ClientStore.webClientWithApplication("$1"))
        LEFT JOIN users owner ON owner.external_user_id = $2
        LEFT JOIN users users ON \(UserStore.isUser("$2", ofApplication: "web.application_id"))
        LEFT JOIN devices dev ON dev.user_id = users.id AND dev.status = $3
        ORDER BY dev.created_at DESC
        """

    /// How the device's columns are named beside the user's.
    private static let devicePrefix = "device_"

    /// The external ids of the users with an active device enrolled through `clientID`.
    func usersWithActiveDevice(enrolledThrough clientID: String) async throws -> Set<String> {
        let rows = try await db.all("""
            SELECT DISTINCT users.external_user_id FROM devices JOIN users ON users.id = devices.user_id
            WHERE devices.client_id = $1 AND devices.status = $2
            """, clientID, CredentialStatus.active.rawValue)
        return Set(try rows.map { try $0["external_user_id"] })
    }

    /// All the user's devices, revoked ones too, oldest first.
    func all(ofUser userID: String) async throws -> [DeviceRecord] {
        try await db.all(DeviceRecord.self, "SELECT * FROM devices WHERE user_id = $1 ORDER BY created_at", userID)
    }

    func insert(_ device: DeviceRecord) async throws {
        try await db.run("""
            INSERT INTO devices (
                id, user_id, public_key, name, model, os, push_channel, push_token, push_app_id,
                push_token_invalid_at, push_token_invalid_reason, status, created_at, revoked_at, client_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
            """,
            device.id, device.userID, device.publicKey, device.name, device.model, device.os, device.pushChannel,
            device.pushToken, device.pushAppID, device.pushTokenInvalidAt, device.pushTokenInvalidReason, device.status,
            device.createdAt, device.revokedAt, device.clientID)
    }

    /// Revokes the device if it is active; revoking again changes nothing.
    func revoke(_ id: String, at now: Date) async throws {
        try await CredentialStatus.revoke(id, with: Self.revocation, at: now, on: db)
    }

    private static let revocation = CredentialStatus.revocation(in: "devices")

    /// Records that the push provider refused the device's token (the first refusal is kept).
    func markPushTokenInvalid(_ id: String, reason: String, at now: Date) async throws {
        try await db.run("""
            UPDATE devices SET push_token_invalid_at = $1, push_token_invalid_reason = $2
            WHERE id = $3 AND push_token_invalid_at IS NULL
            """, now, reason, id)
    }
}
