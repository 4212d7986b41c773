import CountersignCore
import Fluent
import FluentSQL
import Foundation
import Journeys

/// Journey effects over Fluent. Reads go straight to the database; writes are held in the call's
/// `UnitOfWork` and applied in the same transaction that saves the interaction, so a refused call
/// leaves nothing.
actor FluentJourneyEffects: JourneyEffects {
    let services: JourneyServices
    /// The interaction this call runs; approvals created here wake it.
    let interactionID: String
    /// The call's writes and what waits for their commit.
    let work: UnitOfWork
    private var pendingUsers: [UserModel] = []
    /// Approvals this call has already ended (e.g. the last wrong web OTP, then the rejection).
    private var approvalsClosed: Set<String> = []
    /// Devices this call has read, so the approval it creates for one does not read it again.
    var devicesRead: [String: DeviceModel] = [:]

    init(services: JourneyServices, interactionID: String, work: UnitOfWork) {
        self.services = services
        self.interactionID = interactionID
        self.work = work
    }

    var database: any Database { services.database }
    var approvals: ApprovalLifecycle { services.approvals }

    /// Whether this call has not ended `approvalID` yet; from now on it has.
    func firstClose(of approvalID: String) -> Bool {
        approvalsClosed.insert(approvalID).inserted
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
        await work.hold { database in try await user.create(on: database) }
        return user.context
    }

    func registerBiometricKey(_ registration: BiometricKeyRegistration) async throws -> String {
        let key = BiometricKeyModel(
            id: SecureRandom.identifier(prefix: "bio"), userID: registration.userID, publicKeyID: registration.publicKeyID,
            publicKey: registration.key.spkiBase64, keyFamily: registration.key.family.rawValue, os: registration.os)
        let now = services.clock.now()
        await work.hold { database in
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
        await work.hold { database in
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
        await work.hold { database in try await evidence.create(on: database) }
        return evidence.id!
    }
}

extension UserModel {
    var context: UserContext {
        UserContext(userID: id!, externalUserID: externalUserID, email: email)
    }
}
