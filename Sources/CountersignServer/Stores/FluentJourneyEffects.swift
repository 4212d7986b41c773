import CountersignCore
import Fluent
import FluentSQL
import Foundation
import Journeys

/// Journey effects over Fluent. Reads go straight to the database; writes are held back and applied by
/// `commit(on:)` in the same transaction that saves the interaction, so a refused call leaves nothing.
actor FluentJourneyEffects: JourneyEffects {
    let services: JourneyServices
    /// The interaction this call runs; approvals created here wake it.
    let interactionID: String
    private var pendingUsers: [UserModel] = []
    private var pendingWrites: [@Sendable (any Database) async throws -> Void] = []
    private var afterCommitActions: [@Sendable () async -> Void] = []
    /// Approvals this call has already ended (e.g. the last wrong web OTP, then the rejection).
    var approvalsClosed: Set<String> = []
    /// Devices this call has read, so the approval it creates for one does not read it again.
    var devicesRead: [String: DeviceModel] = [:]

    init(services: JourneyServices, interactionID: String) {
        self.services = services
        self.interactionID = interactionID
    }

    var database: any Database { services.database }

    /// Holds back a write until `commit(on:)`.
    func hold(_ write: @escaping @Sendable (any Database) async throws -> Void) {
        pendingWrites.append(write)
    }

    /// Runs `action` once the call's writes are committed (pushes, wake-ups).
    func afterCommit(_ action: @escaping @Sendable () async -> Void) {
        afterCommitActions.append(action)
    }

    func findUser(externalUserID: String) async throws -> UserContext? {
        if let pending = pendingUsers.first(where: { $0.externalUserID == externalUserID }) {
            return pending.context
        }
        return try await UserModel.load(externalUserID: externalUserID, on: try database.sql)?.context
    }

    func createUser(externalUserID: String, email: String?) async throws -> UserContext {
        let user = UserModel(id: SecureRandom.identifier(prefix: "usr"), externalUserID: externalUserID, email: email)
        pendingUsers.append(user)
        pendingWrites.append { database in try await user.create(on: database) }
        return user.context
    }

    func registerBiometricKey(_ registration: BiometricKeyRegistration) async throws -> String {
        let key = BiometricKeyModel(
            id: SecureRandom.identifier(prefix: "bio"), userID: registration.userID, publicKeyID: registration.publicKeyID,
            publicKey: registration.key.spkiBase64, keyFamily: registration.key.family.rawValue, os: registration.os)
        let now = services.clock.now()
        pendingWrites.append { database in
            try await BiometricKeyModel.query(on: database)
                .filter(\.$user.$id == registration.userID)
                .filter(\.$publicKeyID == registration.publicKeyID)
                .filter(\.$status == CredentialStatus.active.rawValue)
                .set(\.$status, to: CredentialStatus.revoked.rawValue)
                .set(\.$revokedAt, to: now)
                .update()
            try await key.create(on: database)
        }
        return key.id!
    }

    func activeBiometricKey(userID: String, publicKeyID: String) async throws -> BiometricCredential? {
        // The key with the status of the device it is bound to, if any, in one query.
        struct Row: Decodable {
            let public_key: String
            let device_id: String?
            let device_status: String?
        }
        guard let row = try await database.sql.raw("""
            SELECT bio.public_key, bio.device_id, dev.status AS device_status
            FROM \(ident: BiometricKeyModel.schema) bio LEFT JOIN \(ident: DeviceModel.schema) dev ON dev.id = bio.device_id
            WHERE bio.user_id = \(bind: userID) AND bio.public_key_id = \(bind: publicKeyID)
                AND bio.status = \(bind: CredentialStatus.active.rawValue)
            """).first(decoding: Row.self)
        else { return nil }
        if row.device_id != nil, row.device_status != CredentialStatus.active.rawValue { return nil }
        guard let key = try? VerifyingKey(base64: row.public_key, allowRSA: true) else { return nil }
        return BiometricCredential(key: key, deviceID: row.device_id)
    }

    func registerDevice(_ registration: DeviceRegistration) async throws -> String {
        let device = DeviceModel(
            id: SecureRandom.identifier(prefix: "dev"), userID: registration.userID, publicKey: registration.publicKey.spkiBase64,
            name: registration.name, model: registration.model, os: registration.os,
            pushChannel: registration.pushChannel.rawValue, pushToken: registration.pushToken, pushAppID: registration.pushAppID)
        let deviceID = device.id!
        pendingWrites.append { database in
            try await device.create(on: database)
            if !registration.biometricKeyIDs.isEmpty {
                try await BiometricKeyModel.query(on: database)
                    .filter(\.$id ~~ registration.biometricKeyIDs)
                    .set(\.$deviceID, to: deviceID)
                    .update()
            }
        }
        return deviceID
    }

    func issueToken(_ request: TokenRequest) async throws -> String {
        try await services.tokenIssuer.issue(request)
    }

    func recordTransactionSignature(_ signature: TransactionSignature) async throws -> String {
        let evidence = TransactionEvidenceModel(id: SecureRandom.identifier(prefix: "evd"), signature: signature)
        hold { database in try await evidence.create(on: database) }
        return evidence.id!
    }

    /// Applies the held-back writes, in the order the journey made them.
    func commit(on database: any Database) async throws {
        for write in pendingWrites { try await write(database) }
        pendingWrites = []
        pendingUsers = []
    }

    /// Runs what waited for the commit, in order.
    func runAfterCommit() async {
        for action in afterCommitActions { await action() }
        afterCommitActions = []
    }
}

extension UserModel {
    var context: UserContext {
        UserContext(userID: id!, externalUserID: externalUserID, email: email)
    }
}
