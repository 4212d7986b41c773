import SQLKit
import Foundation
import Journeys

/// Every statement on `devices`.
struct DeviceStore {
    static let table = "devices"
    let sql: any SQLDatabase

    func find(_ id: String) async throws -> DeviceRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: id)").first(decoding: DeviceRecord.self)
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
        // One row per device, or one with no device (and no user): the user's columns renamed, as a device
        // has some of the same names.
        let rows = try await sql.raw("""
            SELECT dev.*, \(ClientStore.webClientApplicationColumns),
                \(unsafeRaw: UserRecord.CodingKeys.columns(of: "users", prefixedWith: Self.userPrefix)), owner.id AS identifier_owner_id
            FROM \(ClientStore.webClientWithApplication(clientID))
            LEFT JOIN \(name: UserStore.table) owner ON owner.external_user_id = \(bind: ExternalUserID.canonical(externalUserID))
            LEFT JOIN \(name: UserStore.table) users ON \(UserStore.isUser(externalUserID, ofApplication: "web.application_id"))
            LEFT JOIN \(name: Self.table) dev ON dev.user_id = users.id AND dev.status = \(bind: CredentialStatus.active.rawValue)
            ORDER BY dev.created_at DESC
            """).all()
        guard let first = rows.first else { return nil }
        return Addressees(
            application: try ClientStore.webClientApplication(in: first),
            user: try first.decode(joined: UserRecord.self, prefix: Self.userPrefix),
            devices: try rows.compactMap { try $0.decode(joined: DeviceRecord.self) },
            identifierOwnerID: try first.decode(column: "identifier_owner_id", as: String?.self))
    }

    /// How the user's columns are named beside their devices'.
    private static let userPrefix = "member_"

    /// All the user's devices, revoked ones too, oldest first.
    func all(ofUser userID: String) async throws -> [DeviceRecord] {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE user_id = \(bind: userID) ORDER BY created_at")
            .all(decoding: DeviceRecord.self)
    }

    func insert(_ device: DeviceRecord) async throws {
        try await sql.insert(device, into: Self.table).run()
    }

    func revoke(_ id: String, at now: Date) async throws {
        try await revokeCredential(id, in: Self.table, at: now, on: sql)
    }

    /// Records that the push provider refused the device's token (the first refusal is kept).
    func markPushTokenInvalid(_ id: String, reason: String, at now: Date) async throws {
        try await sql.raw("""
            UPDATE \(name: Self.table) SET push_token_invalid_at = \(bind: now), push_token_invalid_reason = \(bind: reason)
            WHERE id = \(bind: id) AND push_token_invalid_at IS NULL
            """).run()
    }
}
