import CountersignCore
import Foundation
import Journeys
import NIOCore

/// Starts journeys and answers their steps: the orchestration API's logic, apart from HTTP.
///
/// A call either commits everything it did (the interaction's new state, a rotated token, the journey's
/// writes) in one transaction, or nothing at all. Pushes and wake-ups follow the commit.
///
/// An interaction's state holds what its client must not read and nobody should find in a copy of the
/// database (challenges, the web OTP the browser shows): it is stored sealed with the master key while
/// the run goes on, and not at all once it has ended. What an ended run keeps for a while is the answer
/// that ended it, sealed too (`IdempotentReplayRecord`).
struct InteractionService: Sendable {
    let services: JourneyServices
    let journeys: JourneyRegistry
    let interactionLifetime: TimeInterval
    let secrets: SecretBox
    let startLimiter: StartRateLimiter
    let metrics: ServerMetrics
    /// The runs this instance committed last, so that its next call on them skips the read and the decoding.
    let runCache = RunCache()

    var storage: Storage { services.storage }

    /// The outcome of a call: the response body (an `IdoResponse` as `JSONEncoder.wire` writes it), and
    /// whether it shows the step again after an error the client made (a wrong code), which the wire
    /// protocol answers with `400`.
    struct Reply {
        let json: Data
        var isRepeatedAfterError = false

        init(json: Data, isRepeatedAfterError: Bool = false) {
            self.json = json
            self.isRepeatedAfterError = isRepeatedAfterError
        }

        init(_ body: IdoResponse, isRepeatedAfterError: Bool = false) throws {
            self.init(json: try JSONEncoder.wire.encode(body), isRepeatedAfterError: isRepeatedAfterError)
        }
    }

    /// The most `additional_params` a start may carry, as JSON: they live in the interaction's state.
    static let additionalParamsLimit = 4096
    /// The longest `correlation_id`, in characters: it is kept with the interaction and every approval it makes.
    static let correlationIDLimit = 128

    func start(journeyID: String, request: StartJourneyRequest, origin: RequestOrigin) async throws -> Reply {
        guard let journey = journeys[journeyID] else { throw ServiceError.notFound("No journey '\(journeyID)'.") }
        try await startLimiter.admit(clientID: request.clientID, address: origin.clientIP)
        if let correlationID = request.correlationID, correlationID.count > Self.correlationIDLimit {
            throw ServiceError.notValid("'correlation_id' must be at most \(Self.correlationIDLimit) characters.")
        }
        guard let client = try await storage.clients.startingClient(request.clientID, webOrigin: origin.webOrigin) else {
            throw ServiceError(.unauthenticated, ErrorCode.invalidClient, "Unknown client_id '\(request.clientID)'.")
        }
        // After the client: encoding is the costliest check, and a stranger without a client id is refused first.
        if let params = request.additionalParams, try JSONEncoder.wire.encode(params).count > Self.additionalParamsLimit {
            throw ServiceError.notValid("'additional_params' must be at most \(Self.additionalParamsLimit / 1024) KiB of JSON.")
        }
        try journeys.check(journey, mayStartFrom: client.record, allowedJourneys: client.allowedJourneys)
        if let webOrigin = origin.webOrigin, !client.listsOrigin {
            throw ServiceError(
                .forbidden, ErrorCode.originNotAllowed, "The application of client '\(client.record.id)' does not list the origin '\(webOrigin)'.")
        }
        var approvalData: ApprovalData?
        if let submitted = request.approvalData {
            do {
                approvalData = try ApprovalData(json: submitted)
            } catch {
                throw ServiceError(.invalidRequest, ErrorCode.invalidApprovalData, error.description)
            }
        }
        let state = InteractionState(
            journeyID: journey.id, clientID: request.clientID, requestParams: request.additionalParams ?? [:],
            approvalData: approvalData, correlationID: request.correlationID)
        return try await begin(journey, state: state, origin: origin)
    }

    /// Runs a new interaction of `journey` from `state` to its first client step and stores it.
    /// `approvalRead`: an approval the caller has just read, which the journey's steps then need not read again.
    /// `callerWrite`: a write of the caller's own (a device signature's use), committed with the interaction or not at all.
    func begin(
        _ journey: JourneyDefinition, state initial: InteractionState, origin: RequestOrigin, approvalRead: ApprovalSnapshot? = nil,
        cachedApproval: ApprovalRecord? = nil, committing callerWrite: DeferredStatement? = nil
    ) async throws -> Reply {
        var state = initial
        let now = services.clock.now()
        let interactionID = SecureRandom.identifier(prefix: "int")
        let work = UnitOfWork()
        if let callerWrite { await work.hold(callerWrite) }
        let effects = StoredJourneyEffects(
            services: services, interactionID: interactionID, clientID: state.clientID, work: work, origin: origin,
            approvalRead: approvalRead, cachedApproval: cachedApproval)
        // A refusal worked out by the journey, or by a statement at the commit, is recorded once the call ends with it.
        return try await recordingRefusal {
            let presentation = try await run { try await JourneyRunner(journey: journey, effects: effects, now: now).start(&state) }

            let token = state.isFinished ? nil : SecureRandom.identifier(prefix: "itk")
            let record = InteractionRecord(
                id: interactionID, journeyID: journey.id, clientID: state.clientID, tokenHash: token.map(SecretDigest.hex), version: 1,
                finished: state.isFinished, expiresAt: now.addingTimeInterval(interactionLifetime),
                state: try stored(state, interactionID: interactionID),
                createdAt: now, userID: state.user?.userID)
            try await work.commit(on: storage, first: storage.interactions.insert(record))
            if !state.isFinished { runCache.remember(record, state: state, cachedApproval: await effects.cachedApproval) }
            metrics.interactionStarted(journey: journey.id)
            if state.isFinished { metrics.interactionFinished(journey: journey.id, finalStep: presentation.journeyStepID) }
            return try Reply(Self.response(presentation, interactionID: interactionID, journeyID: journey.id, token: token))
        }
    }

    /// Answers the run's current step with the client's response: takes the run, runs the step, commits,
    /// answers. The run is the one this instance committed last (`RunCache`) when `bearer` is its token,
    /// else the database's row; an ended row answers the call that ended it again (idempotent replay).
    ///
    /// A cached run may no longer be the row (another instance moved it on): its save's compare-and-set
    /// tells, and so does a read when the step refused; then the call is worked out again on the row, as
    /// if nothing had been kept. A row another call moved on since it was read is worked out again too
    /// (when that call only polled, the token still holds; when it moved the run, the token is refused).
    /// `response` is the body as decoded, or why it could not be: refused only where a try uses it, after
    /// the token's checks.
    func submit(
        interactionID: String, bearer: String?, response: Result<ClientResponse, any Error>, origin: RequestOrigin
    ) async throws -> Reply {
        try await recordingRefusal {
            var cached = runCache.lastCommitted(interactionID).flatMap { run in
                Self.holds(bearer, of: run.record) && services.clock.now() < run.record.expiresAt ? run : nil
            }
            var readsLeft = Self.answersOnMovedRow
            while cached != nil || readsLeft > 0 {
                let run: RunCache.Run
                if let kept = cached {
                    run = kept
                } else {
                    readsLeft -= 1
                    let row = try await storage.interactions.find(interactionID)
                    if let replayed = try await replay(in: row, for: bearer) { return replayed }
                    let interaction = try authorized(row, interactionID, bearer: bearer)
                    run = RunCache.Run(record: interaction, state: try opened(interaction), cachedApproval: nil)
                }
                let answer: Answer
                do {
                    answer = try await self.answer(
                        response, to: run.record, bearer: bearer, state: run.state, cachedApproval: run.cachedApproval, origin: origin)
                } catch where cached != nil {
                    // A refusal worked out on the cached run is the answer only if that run is still the row.
                    guard try await storage.interactions.find(interactionID).map({ Self.isSameSave($0, as: run.record) }) == true else {
                        runCache.forget(run.record)
                        cached = nil
                        continue
                    }
                    throw error
                }
                do {
                    return try await commit(answer, refusingWith: RowMovedOn())
                } catch is RowMovedOn {
                    if cached != nil { runCache.forget(run.record) }
                    cached = nil
                }
            }
            throw ServiceError.invalidToken("The interaction token was already used.")
        }
    }

    /// How many times a submit is worked out on a row read anew before it gives up as refused.
    private static let answersOnMovedRow = 3

    /// The shortest time a run's last answer is kept for a client that lost it on the way (`IdempotentReplayRecord`).
    /// It is kept until the interaction would have expired, so the token that asked is good for no longer
    /// than it was, but at least this long, time for a client's own timeout (URLSession waits 60 s) and a
    /// retry. The sweeper lets it go after that, at its next round.
    static let answerKeptAtLeast: TimeInterval = 90

    /// A save changed no row: the run was saved since this call read it (or since this instance kept it),
    /// by another call or another instance, or it ended.
    private struct RowMovedOn: Error {}

    /// Whether `row` is the save `record` is (its version and token).
    private static func isSameSave(_ row: InteractionRecord, as record: InteractionRecord) -> Bool {
        row.version == record.version && row.tokenHash == record.tokenHash
    }

    /// Runs `call`; a refusal it ends with that waits to be recorded (`RecordedRefusal`) is recorded, then thrown.
    private func recordingRefusal<Result>(_ call: () async throws -> Result) async throws -> Result {
        do {
            return try await call()
        } catch let refused as RecordedRefusal {
            try await refused.record()
            throw refused.refusal
        }
    }

    /// A submit worked out on `record` and its state, with its writes held, not yet committed.
    private struct Answer {
        let record: InteractionRecord
        let journeyID: String
        let presentation: StepPresentation
        let reply: Reply
        let state: InteractionState
        let token: String?
        let sealedState: String
        /// When the answer ends the run: the answer as it is kept for the token that asked.
        let kept: IdempotentReplayRecord?
        let work: UnitOfWork
        let cachedApproval: ApprovalRecord?
    }

    /// Works out the answer to `response` (the body as read, or why it could not be) for `interaction`,
    /// whose current token `bearer` is.
    private func answer(
        _ read: Result<ClientResponse, any Error>, to interaction: InteractionRecord, bearer: String?, state opened: InteractionState,
        cachedApproval: ApprovalRecord?, origin: RequestOrigin
    ) async throws -> Answer {
        let now = services.clock.now()
        let response = try read.get()
        guard let journey = journeys[interaction.journeyID] else {
            throw ServiceError(.gone, ErrorCode.expired, "The journey '\(interaction.journeyID)' is no longer available.")
        }
        var state = opened
        let work = UnitOfWork()
        let effects = StoredJourneyEffects(
            services: services, interactionID: interaction.id, clientID: state.clientID, work: work, origin: origin,
            cachedApproval: cachedApproval)
        let presentation = try await run {
            try await JourneyRunner(journey: journey, effects: effects, now: now).submit(response, to: &state)
        }
        let token = state.isFinished ? nil : presentation.keepsToken ? bearer : SecureRandom.identifier(prefix: "itk")
        let reply = try Reply(
            Self.response(presentation, interactionID: interaction.id, journeyID: journey.id, token: token),
            isRepeatedAfterError: presentation.isRepeatedAfterError)
        var kept: IdempotentReplayRecord?
        if state.isFinished, let asked = interaction.tokenHash {
            kept = IdempotentReplayRecord(
                id: interaction.id, tokenHash: asked, answer: try sealed(reply.json, of: interaction.id, for: asked),
                expiresAt: max(interaction.expiresAt, now + Self.answerKeptAtLeast))
        }
        return Answer(
            record: interaction, journeyID: journey.id, presentation: presentation, reply: reply, state: state, token: token,
            sealedState: try stored(state, interactionID: interaction.id), kept: kept, work: work, cachedApproval: await effects.cachedApproval)
    }

    /// Saves the answer's state if nobody saved one since its row was read (else the call is refused with
    /// `refusal`), with the journey's writes.
    private func commit(_ answer: Answer, refusingWith refusal: any Error) async throws -> Reply {
        let state = answer.state
        let (save, saved) = storage.interactions.saveNext(
            of: answer.record, state: answer.sealedState, tokenHash: answer.token.map(SecretDigest.hex), finished: state.isFinished,
            userID: state.user?.userID)
        if let kept = answer.kept { await answer.work.hold(storage.idempotentReplays.insert(kept)) }
        try await answer.work.commit(on: storage, first: save.refusing { _ in refusal })
        if state.isFinished {
            runCache.forget(saved.id)
            metrics.interactionFinished(journey: answer.journeyID, finalStep: answer.presentation.journeyStepID)
        } else {
            runCache.remember(saved, state: state, cachedApproval: answer.cachedApproval)
        }
        return answer.reply
    }

    /// Whether `bearer` is the token `record` expects next.
    private static func holds(_ bearer: String?, of record: InteractionRecord) -> Bool {
        guard let bearer, let expected = record.tokenHash else { return false }
        return SecretDigest.matches(bearer, storedHex: expected)
    }

    /// `interaction`, as read for `interactionID`, when `bearer` is its current token and it is still running.
    private func authorized(_ interaction: InteractionRecord?, _ interactionID: String, bearer: String?) throws -> InteractionRecord {
        guard let interaction else {
            throw ServiceError.notFound("No interaction '\(interactionID)'.")
        }
        if interaction.finished { throw ServiceError(.gone, ErrorCode.expired, "The interaction has ended.") }
        guard Self.holds(bearer, of: interaction) else { throw ServiceError.invalidToken() }
        guard services.clock.now() < interaction.expiresAt else { throw ServiceError(.gone, ErrorCode.expired, "The interaction has expired.") }
        return interaction
    }

    /// Runs the journey, turning its refusals into service errors (nothing is stored for them).
    private func run(_ body: () async throws -> StepPresentation) async throws -> StepPresentation {
        do {
            return try await body()
        } catch let refusal as ClientResponseNotValid {
            throw ServiceError.notValid(refusal.message)
        } catch let slowDown as SlowDown {
            throw ServiceError(
                .tooSoon(retryAfter: slowDown.retryAfter), ErrorCode.slowDown, "Poll no more often than the polling interval.")
        }
    }

    /// What a browser's wait on its interaction needs: the interaction, the approval its current step
    /// waits on (if it waits on one) and, when it came with the interaction's read, that approval's status.
    struct ApprovalWait {
        let interaction: InteractionRecord
        let approvalID: String?
        let status: ApprovalStatus?
    }

    /// The interaction `interactionID`, when `bearer` is its token, and the approval its current step waits
    /// on. When this instance saved the run last, the approval that run waited on is read with the
    /// interaction, in one read; its status is used only if the row's run still waits on it.
    func approvalWaitedOn(_ interactionID: String, bearer: String?) async throws -> ApprovalWait {
        let expected = runCache.lastCommitted(interactionID).flatMap { WebToMobileAuthenticationStep.approvalWaitedOn(in: $0.state) }
        let read: InteractionRecord?
        var expectedStatus: ApprovalStatus?
        if let expected {
            let found = try await storage.interactions.find(interactionID, withStatusOf: expected, at: services.clock.now())
            (read, expectedStatus) = (found?.record, found?.approvalStatus)
        } else {
            read = try await storage.interactions.find(interactionID)
        }
        let interaction = try authorized(read, interactionID, bearer: bearer)
        let approvalID = WebToMobileAuthenticationStep.approvalWaitedOn(in: try opened(interaction))
        return ApprovalWait(interaction: interaction, approvalID: approvalID, status: approvalID == expected ? expectedStatus : nil)
    }

    /// The interaction's state; a state stored in clear before states were sealed is read as it is.
    private func opened(_ interaction: InteractionRecord) throws -> InteractionState {
        if let state = runCache.state(of: interaction) { return state }
        let json = interaction.state.hasPrefix("{") ? Data(interaction.state.utf8) : try secrets.openBytes(interaction.state, boundTo: interaction.id)
        return try WireJSON.stored(InteractionState.self, from: json)
    }

    /// What the interaction's row keeps of `state`: sealed while the run goes on; nothing once it has
    /// ended, since a finished run takes no more steps and its state is never read again (its challenges,
    /// web code and answers do not stay at rest until the row is swept).
    private func stored(_ state: InteractionState, interactionID: String) throws -> String {
        guard !state.isFinished else { return "" }
        return try secrets.seal(bytes: try JSONEncoder.wire.encode(state), boundTo: interactionID)
    }

    /// The answer that ended the run in `row`, sent again to the token that asked for it while it is
    /// kept; nil otherwise (the call is then refused as for any ended run), also when the answer was not
    /// sealed for this run and token.
    private func replay(in row: InteractionRecord?, for bearer: String?) async throws -> Reply? {
        guard let row, row.finished, let bearer, let kept = try await storage.idempotentReplays.find(row.id),
            SecretDigest.matches(bearer, storedHex: kept.tokenHash), services.clock.now() < kept.expiresAt,
            let json = try? secrets.openBytes(kept.answer, boundTo: Self.answerBinding(row.id, for: kept.tokenHash))
        else { return nil }
        return Reply(json: json)
    }

    /// An answer's `json` sealed for the row of interaction `interactionID` and the token whose hash is
    /// `tokenHash`: it cannot be opened as the row's state, nor for another token written beside it.
    private func sealed(_ json: Data, of interactionID: String, for tokenHash: String) throws -> String {
        try secrets.seal(bytes: json, boundTo: Self.answerBinding(interactionID, for: tokenHash))
    }

    private static func answerBinding(_ interactionID: String, for tokenHash: String) -> String { "\(interactionID) answer \(tokenHash)" }

    private static func response(_ presentation: StepPresentation, interactionID: String, journeyID: String, token: String?) -> IdoResponse {
        IdoResponse(
            interactionID: interactionID, interactionToken: token, journeyID: journeyID,
            journeyStepID: presentation.journeyStepID, data: presentation.data,
            clientResponseOptions: presentation.options.isEmpty ? nil : presentation.options,
            token: presentation.token, error: presentation.error)
    }
}
