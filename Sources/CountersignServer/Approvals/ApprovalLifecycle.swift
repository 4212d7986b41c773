import CountersignCore
import Crypto
import Foundation
import Journeys

/// An approval's whole life in one type: created with its push queued, closed (approved, denied,
/// cancelled, failed, push token invalid; expiry is read from its time), and the waiting browser woken
/// once the close is committed. The journey effects and the push sender both go through it; nothing
/// else creates or closes an approval. Decoys (`DecoyApprovalRecord`) are created and closed here too.
///
/// Every write is held in the caller's `UnitOfWork`, so it commits with the rest of the call, and every
/// wake-up waits for that commit.
struct ApprovalLifecycle: Sendable {
    let storage: Storage
    let clock: any WallClock
    /// The server's hash key: web OTPs and the subjects of decoys are kept only as keyed hashes.
    let hashKey: SymmetricKey
    let events: any EventBus
    let inbox: InboxPushGateway
    let limiter: ApprovalLimiter
    let securityEvents: SecurityEvents
    let metrics: ServerMetrics

    /// Wrong web OTPs an approval accepts.
    static let otpAttempts = 3

    /// A pending approval for `request`, waited on by the web interaction `webInteractionID`, with its push
    /// to `device` queued, once the push-fatigue limits allow it; with one pending approval per user, the
    /// one waiting is cancelled as superseded. `application` is that of the request's web client (nil when
    /// it no longer exists). Returns the approval's id.
    func create(
        _ request: ApprovalRequest, webInteractionID: String, origin: RequestOrigin, device: DeviceRecord,
        application: ClientStore.WebClientApplication?, authorizationRequest: String? = nil, in work: UnitOfWork
    ) async throws -> String {
        let (applicationID, applicationName, nativeClientID) = try Self.approving(application)
        let subject = ApprovalSubject(
            userID: request.user.userID,
            decoyDigest: DecoyApprovalRecord.subjectDigest(identifier: request.user.externalUserID, applicationID: applicationID, key: hashKey))
        let admission = try await admit(subject, from: origin, applicationID: applicationID, limits: request.limits, in: work)
        let approvalID = SecureRandom.identifier(prefix: "apr")
        let approval = ApprovalRecord(
            id: approvalID, applicationID: applicationID, webClientID: request.clientID, nativeClientID: nativeClientID,
            webInteractionID: webInteractionID, webJourneyID: request.journeyID, mobileJourneyID: request.mobileJourneyID,
            userID: request.user.userID, deviceID: request.deviceID, status: ApprovalStatus.pending.rawValue, failureCode: nil,
            amr: "", authTime: nil, approvalData: request.approvalData?.canonicalJSON,
            additionalData: request.additionalData.map(JSONEncoder.wire.text),
            requestContext: JSONEncoder.wire.text(origin.summary),
            correlationID: request.correlationID,
            otpHash: request.otp.map { WebOTP.keyedHash(code: $0, approvalID: approvalID, key: hashKey) },
            otpLength: request.otp?.count, otpAttemptsLeft: request.otp == nil ? 0 : Self.otpAttempts, expiresAt: request.expiresAt,
            createdAt: clock.now(), subjectSequence: admission.approvalSequence, sourceDigest: admission.source,
            authorizationRequest: authorizationRequest)
        let limiter = limiter
        await work.hold(storage.approvals.insert(approval).refusing { _ in limiter.concurrentRequest(for: subject) })
        let metrics = metrics
        await work.afterCommit { metrics.approvalCreated() }
        if admission.rings {
            try await queuePush(of: AddressedApproval(approval: approval, applicationName: applicationName), to: device, in: work)
        }
        return approvalID
    }

    /// A decoy for `request` (an identifier with no phone), waited on by the web interaction
    /// `webInteractionID`: it meets the same checks and limits as an approval would, counted in the same
    /// history (with the approvals of a user the identifier names in another application, and this
    /// application's decoys for it), so a browser cannot tell the two apart; no push goes anywhere. Returns
    /// the decoy's id. `owner` is the user the identifier names in any application, if any (`request.userID` when the step
    /// found one here): a user of another application only has their approvals there counted too.
    func createDecoy(
        _ request: DecoyApprovalRequest, owner: String?, webInteractionID: String, origin: RequestOrigin,
        application: ClientStore.WebClientApplication?, in work: UnitOfWork
    ) async throws -> String {
        let (applicationID, _, _) = try Self.approving(application)
        let digest = DecoyApprovalRecord.subjectDigest(identifier: request.identifier, applicationID: applicationID, key: hashKey)
        let subject = ApprovalSubject(userID: owner, decoyDigest: digest)
        let admission = try await admit(subject, from: origin, applicationID: applicationID, limits: request.limits, in: work)
        let decoy = DecoyApprovalRecord(
            id: SecureRandom.identifier(prefix: DecoyApprovalRecord.idPrefix), applicationID: applicationID, subjectDigest: digest,
            webInteractionID: webInteractionID, status: ApprovalStatus.pending.rawValue, failureCode: nil,
            expiresAt: request.expiresAt, createdAt: clock.now(), resolvedAt: nil, subjectSequence: admission.decoySequence,
            sourceDigest: admission.source)
        // A statement, as an approval's insert is: on PostgreSQL the decoy's call commits in one round trip too.
        let limiter = limiter
        await work.hold(storage.approvals.insertDecoy(decoy).refusing { _ in limiter.concurrentRequest(for: subject) })
        let metrics = metrics
        await work.afterCommit { metrics.decoyApprovalCreated() }
        return decoy.id
    }

    /// The application of a request's web client (nil when it no longer exists), its name (which the push
    /// shows) and its native client, which the phone must use: refused when it has none.
    private static func approving(
        _ application: ClientStore.WebClientApplication?
    ) throws -> (applicationID: String, applicationName: String, nativeClientID: String) {
        guard let application else {
            throw ServiceError(.conflict, ErrorCode.unknownClient, "The web client no longer exists.")
        }
        guard let nativeClientID = application.nativeClientID else {
            throw ServiceError(.conflict, ErrorCode.noNativeClient, "Application '\(application.id)' has no native client for the phone.")
        }
        return (application.id, application.name, nativeClientID)
    }

    /// Passes the push-fatigue limits for `subject`; with one pending approval per user, cancels the ones
    /// waiting as superseded. The new request's insert must carry the admission's number, and refuse the
    /// call when it inserts nothing (`ApprovalLimiter.admit`).
    private func admit(
        _ subject: ApprovalSubject, from origin: RequestOrigin, applicationID: String, limits: ApprovalLimits, in work: UnitOfWork
    ) async throws -> ApprovalLimiter.Admission {
        let source = try await source(of: origin, for: subject, in: applicationID)
        let admission = try await limiter.admit(subject, from: source, limits: limits)
        if limits.onePendingPerUser {
            for older in admission.pending { await close(older, as: .cancelled, failureCode: ErrorCode.approvalSuperseded, in: work) }
        }
        return admission
    }

    /// Where a request counts as coming from (`RequestSource`): the browser credential it presents when
    /// that is valid and was issued to the subject's user in this application, else its address. The
    /// credential is looked up whoever the subject is, so that a decoy's request does the same work.
    private func source(of origin: RequestOrigin, for subject: ApprovalSubject, in applicationID: String) async throws -> String {
        if let secretHash = origin.browserCredentialHash,
            let credential = try await storage.browserCredentials.find(secretHash: secretHash),
            credential.isValid(at: clock.now()), credential.userID == subject.userID, credential.applicationID == applicationID
        {
            return RequestSource.knownBrowser(credential)
        }
        return RequestSource.digest(of: origin.clientIP, key: hashKey)
    }

    /// Sends the approval's push to `device` again, unless the rings cap holds it back (it stays in the
    /// phone's inbox).
    func resend(_ approval: AddressedApproval, to device: DeviceRecord, limits: ApprovalLimits, in work: UnitOfWork) async throws {
        let record = approval.approval
        guard try await limiter.mayRing(record.userID, from: record.sourceDigest, limits: limits, at: clock.now()) else { return }
        try await queuePush(of: approval, to: device, in: work)
    }

    /// Settles the approval with the phone's answer. Details shown in the browser, or a backend client's
    /// request, count as approved only when the phone signed exactly them. An approval no longer pending
    /// refuses the answer (410), so the phone learns the browser cancelled or the approval expired. It
    /// reads only what never changes of `approval`, so a copy read by an earlier call of the run serves as
    /// well as a fresh read: whether the approval is still open is the close's own compare-and-set.
    func settle(_ approval: ApprovalRecord, with outcome: ApprovalOutcome, in work: UnitOfWork) async throws {
        switch outcome {
        case .approved(let amr, let authTime, let signedApprovalData, let signedAuthorizationRequest):
            let shown = try approval.approvalData.map(ApprovalData.init(jsonText:))
            let unsigned = (shown != nil && shown != signedApprovalData)
                || (approval.authorizationRequest != nil && approval.authorizationRequest != signedAuthorizationRequest)
            if unsigned {
                await close(approval, as: .failed, failureCode: ErrorCode.approvalDataNotSigned, refusingIfClosed: true, in: work)
            } else {
                await close(approval, as: .approved, amr: amr, authTime: authTime, refusingIfClosed: true, in: work)
            }
        case .denied:
            await close(approval, as: .denied, failureCode: ErrorCode.mobileRejected, refusingIfClosed: true, in: work)
        case .deniedNotMine:
            await close(approval, as: .denied, failureCode: ApprovalRecord.deniedAsNotMine, refusingIfClosed: true, in: work)
            await securityEvents.record(
                .notMine, userID: approval.userID, approvalID: approval.id, deviceID: approval.deviceID,
                detail: "the person denied a request on the phone as not theirs", in: work)
        case .failed(let code):
            await close(approval, as: .failed, failureCode: code, refusingIfClosed: true, in: work)
        }
    }

    /// Checks a web OTP typed on the phone. Every try uses up one attempt; the last wrong one fails the approval.
    func checkOTP(_ approval: ApprovalRecord, code: String, in work: UnitOfWork) async -> OTPCheck {
        guard let hash = approval.otpHash, approval.status(at: clock.now()) == .pending, approval.otpAttemptsLeft > 0 else {
            return .exhausted
        }
        let right = WebOTP.matches(code: code, approvalID: approval.id, storedHash: hash, key: hashKey)
        let seen = approval.otpAttemptsLeft
        // Every try uses an attempt, by compare and set, a right code's as a wrong one's: of tries sent at
        // once through several interactions, one is counted and the others retry, refused alike. So
        // parallel tries cannot share one attempt, and a refusal does not tell whether its code was right.
        // (A right code that left the count as it was would not stop the wrong ones racing it.)
        await work.hold(storage.approvals.countOTPTry(approval.id, attemptsLeftSeen: seen).refusing { _ in
            ServiceError(.conflict, ErrorCode.otpAttemptConflict, "Another try of this code was counted at the same time; try again.")
        })
        if right { return .valid }
        let left = seen - 1
        guard left > 0 else {
            await close(approval, as: .failed, failureCode: ErrorCode.otpAttemptsExceeded, in: work)
            await securityEvents.record(
                .otpExhausted, userID: approval.userID, approvalID: approval.id, deviceID: approval.deviceID,
                detail: "the web code was typed wrong on the phone until no try was left", in: work)
            return .exhausted
        }
        return .invalid(attemptsLeft: left)
    }

    /// Cancels the approval for the browser. Whichever close commits first wins: an approval the phone
    /// approved first stays approved and refuses the cancel (`410 approval_closed`), so the browser learns
    /// by its next poll that it is signed in, as the phone was told; one cancelled first refuses the phone's
    /// answer alike.
    func cancel(_ approval: some ClosableApproval, in work: UnitOfWork) async {
        await close(approval, as: .cancelled, failureCode: ErrorCode.cancelled, in: work)
        await work.hold(storage.approvals.unlessApproved(approval.id).refusing { _ in ServiceError.approvalNotPending(.approved) })
    }

    /// Ends a pending approval and, once the change is committed, tells the browser waiting on it how it
    /// ended (`ApprovalClosed`). An approval no longer pending is left as it is (whoever closed it told
    /// the browser); with `refusingIfClosed` (the phone answering), that refuses the whole call. An
    /// approval this call already closed is left alone.
    func close(
        _ approval: some ClosableApproval, as status: ApprovalStatus, failureCode: String? = nil, amr: [String] = [], authTime: Date? = nil,
        refusingIfClosed: Bool = false, in work: UnitOfWork
    ) async {
        let approvalID = approval.id
        guard await work.firstClose(of: approvalID) else { return }
        let (now, metrics, events) = (clock.now(), metrics, events)
        let topic = EventTopic.interaction(approval.webInteractionID)
        let closing = storage.approvals.close(approvalID, as: status, failureCode: failureCode, amr: amr, authTime: authTime, at: now)
            .telling { closed in
                guard closed else { return }
                let event = ApprovalClosed(approvalID: approvalID, status: status)
                await work.afterCommit {
                    // The figures count approvals; a decoy is none.
                    if !DecoyApprovalRecord.isDecoy(approvalID) { metrics.approvalClosed(outcome: status.rawValue) }
                    await events.publish(topic, event.message)
                    // A backend client in ping mode is told once the answer is known (`CIBANotifier`).
                    if approval.webInteractionID.hasPrefix(CIBARequestRecord.idPrefix + "_") { await events.publish(EventTopic.cibaPings, "") }
                }
            }
        await work.hold(
            refusingIfClosed
                ? closing.refusing { storage in
                    let status = try await storage.approvals.status(of: approvalID, at: now)
                    // Still pending: only an approval's device, revoked since, keeps it from being approved.
                    return status == .pending ? ServiceError.deviceRevoked : ServiceError.approvalNotPending(status)
                }
                : closing)
    }

    /// Saves the approval's push in the call's commit and rings once it is committed.
    ///
    /// A push through a provider is queued, due at once, for the sender. An inbox device needs no
    /// provider: the job is saved as sent with its delivery record, and the ring wakes the device's
    /// long-poll directly, sparing the queue's round trip.
    private func queuePush(of approval: AddressedApproval, to device: DeviceRecord, in work: UnitOfWork) async throws {
        let push = QueuedPush(approvalID: approval.approval.id, device: device, at: clock.now())
        for statement in storage.pushJobs.insert(push.job, delivery: push.delivery) { await work.hold(statement) }
        let (events, inbox, metrics) = (events, inbox, metrics)
        await work.afterCommit {
            if let delivery = push.delivery {
                metrics.pushAttempted(provider: push.job.channel, outcome: delivery.status, duration: nil)
                await inbox.ring(deviceID: push.job.deviceID, payload: approval.pushNotification.payload)
            } else {
                await events.publish(EventTopic.pushQueue, "")
            }
        }
    }
}
