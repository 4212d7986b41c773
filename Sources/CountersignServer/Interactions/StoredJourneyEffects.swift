import CountersignCore
import Foundation
import Journeys

/// The journey interpreter's effects, over the stores. Reads go straight to the database; writes are
/// held in the call's `UnitOfWork` and applied in the same transaction that saves the interaction, so a
/// refused call leaves nothing.
actor StoredJourneyEffects: JourneyEffects {
    let services: JourneyServices
    /// The interaction this call runs; approvals created here wake it.
    let interactionID: String
    /// The interaction's client: its application is the one whose users the journey finds and creates.
    let clientID: String
    /// The call's writes and what waits for their commit.
    let work: UnitOfWork
    /// Where the call came from; approvals it creates show it on the phone.
    let origin: RequestOrigin
    let storage: Storage
    private var pendingUsers: [UserRecord] = []
    /// Devices this call has read, so the approval it creates for one does not read it again.
    var devicesRead: [String: DeviceRecord] = [:]
    /// The application of the web client, read with the devices, so the approval (or decoy) does not read it again.
    var applicationRead: ClientStore.WebClientApplication?
    /// The user an identifier names in any application, read with the devices, so a decoy does not read it again.
    var identifierOwnerRead: (identifier: String, userID: String?)?
    /// An approval the caller read for this call, so a step does not read it again. The call's own writes
    /// wait for its commit, so reading it again here would find the same row (unless another call
    /// committed in between, which can happen after the read as well).
    let approvalRead: ApprovalSnapshot?
    /// The approval this run settles, once any call of the run has read it: kept with the run (`RunCache`),
    /// so that the call that settles it need not read it again.
    var cachedApproval: ApprovalRecord?

    init(
        services: JourneyServices, interactionID: String, clientID: String, work: UnitOfWork, origin: RequestOrigin,
        approvalRead: ApprovalSnapshot? = nil, cachedApproval: ApprovalRecord? = nil
    ) {
        self.services = services
        self.interactionID = interactionID
        self.clientID = clientID
        self.work = work
        self.origin = origin
        self.approvalRead = approvalRead
        self.cachedApproval = cachedApproval
        storage = services.storage
    }

    var approvals: ApprovalLifecycle { services.approvals }

    func findUser(externalUserID: String) async throws -> UserContext? {
        if let created = createdUser(externalUserID) { return created.context }
        return try await storage.users.find(externalUserID: externalUserID, inApplicationOfClient: clientID)?.context
    }

    /// The user `externalUserID` when this call creates them: not in the database until the call commits.
    func createdUser(_ externalUserID: String) -> UserRecord? {
        pendingUsers.first { $0.externalUserID == ExternalUserID.canonical(externalUserID) }
    }

    func createUser(externalUserID: String, email: String?) async throws -> UserContext? {
        guard try await storage.users.find(externalUserID: externalUserID) == nil else { return nil }
        return await create(UserRecord(
            id: SecureRandom.identifier(prefix: "usr"), externalUserID: externalUserID, email: email, createdAt: services.clock.now()))
    }

    /// Stores `user` as a member of this journey's application, with the call's other writes.
    private func create(_ user: UserRecord) async -> UserContext {
        pendingUsers.append(user)
        await work.hold { storage in try await storage.users.insert(user) }
        await join(user.context)
        return user.context
    }

    /// Makes `user` a member of this journey's application, with the call's other writes.
    private func join(_ user: UserContext) async {
        let clientID = clientID
        let now = services.clock.now()
        await work.hold { storage in try await storage.memberships.add(userID: user.userID, applicationOfClient: clientID, at: now) }
    }

    func redeemEnrollmentCode(_ code: String) async throws -> UserContext? {
        guard let issued = try await services.enrollmentCodes.redeemable(code, clientID: clientID) else { return nil }
        let now = services.clock.now()
        await work.hold { storage in
            // Two phones redeeming one code at once: the second commit finds it used and its call fails whole.
            guard try await storage.enrollmentCodes.markUsed(issued.id, at: now) else {
                throw ServiceError(.invalidRequest, ErrorCode.invalidCredentials, "The enrollment code was used meanwhile.")
            }
        }
        // The code is the admin's word: the user joins this application, whichever they belonged to.
        if let user = try await storage.users.find(externalUserID: issued.externalUserID)?.context {
            await join(user)
            return user
        }
        return await create(UserRecord(
            id: SecureRandom.identifier(prefix: "usr"), externalUserID: issued.externalUserID, email: nil, createdAt: now))
    }

    func issueEnrollmentCode(for user: UserContext, lifetime: TimeInterval) async throws -> IssuedEnrollmentCode? {
        guard let application = try await application(), let nativeClientID = application.nativeClientID else { return nil }
        let (record, issued) = services.enrollmentCodes.make(
            externalUserID: user.externalUserID, applicationID: application.id, clientID: nativeClientID, lifetime: lifetime)
        guard let qrCode = QRCodeSVG.encoding(issued.link.uri) else { throw QRCodeTooLong() }
        await work.hold { storage in try await storage.enrollmentCodes.insert(record) }
        return IssuedEnrollmentCode(
            id: record.id, code: issued.code, expiresAt: issued.expiresAt, enrollmentURI: issued.link.uri, qrCodeSVG: qrCode)
    }

    func withdrawEnrollmentCode(_ id: String) async throws {
        let now = services.clock.now()
        await work.hold { storage in _ = try await storage.enrollmentCodes.markUsed(id, at: now) }
    }

    func storeBiometricKeys(_ keys: [BiometricKeyRegistration], onDevice deviceID: String?) async throws {
        let now = services.clock.now()
        let records = keys.map { key in
            BiometricKeyRecord(
                id: SecureRandom.identifier(prefix: "bio"), userID: key.userID, publicKeyID: key.publicKeyID,
                publicKey: key.publicKey, keyFamily: key.keyFamily, os: key.os, deviceID: deviceID,
                status: CredentialStatus.active.rawValue, createdAt: now, revokedAt: nil)
        }
        await work.hold { storage in
            for record in records { try await storage.biometricKeys.replace(with: record, at: now) }
        }
    }

    /// One read for the user and the key. A user this call creates (`pendingUsers`) has no key yet.
    func activeBiometricKey(externalUserID: String, publicKeyID: String) async throws -> BiometricCredential? {
        guard let active = try await storage.biometricKeys.active(
            externalUserID: externalUserID, inApplicationOfClient: clientID, publicKeyID: publicKeyID)
        else { return nil }
        if active.deviceID != nil, active.deviceStatus != CredentialStatus.active.rawValue { return nil }
        guard let key = try? VerifyingKey(base64: active.publicKey, allowRSA: true) else { return nil }
        return BiometricCredential(user: active.user.context, key: key, deviceID: active.deviceID)
    }

    func registerDevice(_ registration: DeviceRegistration) async throws -> String {
        let device = DeviceRecord(
            id: SecureRandom.identifier(prefix: "dev"), userID: registration.userID, publicKey: registration.publicKey.spkiBase64,
            name: registration.name, model: registration.model, os: registration.os,
            pushChannel: registration.pushChannel.rawValue, pushToken: registration.pushToken, pushAppID: registration.pushAppID,
            pushTokenInvalidAt: nil, pushTokenInvalidReason: nil, status: CredentialStatus.active.rawValue,
            createdAt: services.clock.now(), revokedAt: nil, clientID: clientID)
        await work.hold { storage in try await storage.devices.insert(device) }
        return device.id
    }

    func issueToken(_ request: TokenRequest) async throws -> String {
        try await services.tokenIssuer.issue(request)
    }

    func rememberBrowser(of user: UserContext) async throws -> String {
        guard let application = try await application() else {
            throw ServiceError(.conflict, ErrorCode.unknownClient, "The web client no longer exists.")
        }
        let secret = SecureRandom.challenge()
        let now = services.clock.now()
        let credential = BrowserCredentialRecord(
            id: SecureRandom.identifier(prefix: BrowserCredentialRecord.idPrefix), userID: user.userID, applicationID: application.id,
            secretHash: SecretDigest.hex(secret), status: CredentialStatus.active.rawValue, createdAt: now,
            expiresAt: now.addingTimeInterval(BrowserCredentialRecord.lifetime), revokedAt: nil)
        await work.hold { storage in try await storage.browserCredentials.insert(credential) }
        return secret
    }

    func recordTransactionSignature(_ signature: TransactionSignature) async throws -> String {
        var evidence = TransactionEvidenceRecord(id: SecureRandom.identifier(prefix: "evd"), signature: signature)
        // Sealed now, in the call that records it: the seal vouches for the time of signing, and a record
        // changed in the database later no longer matches it.
        evidence.seal = try await services.evidenceSealer.seal(try evidence.bundle())
        await work.hold { [evidence] storage in try await storage.evidence.insert(evidence) }
        return evidence.id
    }
}

/// An enrollment link longer than a QR code holds: the public URL would have to be thousands of characters.
struct QRCodeTooLong: Error, CustomStringConvertible {
    var description: String { "The enrollment link does not fit in a QR code; is COUNTERSIGN_PUBLIC_URL right?" }
}
