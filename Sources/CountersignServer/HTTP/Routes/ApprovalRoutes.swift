import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import Journeys
import NIOCore
import ServiceLifecycle

/// The phone's and the browser's approval endpoints: mobile approve start, the inbox, and the
/// interaction events stream.
struct ApprovalRoutes: RouteGroup {
    let mobileApprove: MobileApproveService
    let interactions: InteractionService
    let verifier: DeviceSignatureVerifier
    let events: any EventBus
    let storage: Storage
    let openWaits: OpenWaits
    let clock: any WallClock

    /// How long an inbox request may be held open at most.
    static let maximumWait = 30
    /// How often the events stream sends a keep-alive comment.
    static let keepAliveInterval: Duration = .seconds(15)

    func register(on router: Router<ServerRequestContext>) {
        let v1 = router.group("v1").add(middleware: StrictJSONMiddleware())
        v1.post("mobile-approve/start", use: startMobileApprove)
        v1.get("devices/:deviceID/pending", use: pending)
        v1.get("interactions/{interactionID}/events", use: events)
    }

    func startMobileApprove(request: Request, context: ServerRequestContext) async throws -> Response {
        let body: MobileApproveStartRequest
        do {
            body = try WireJSON.request(MobileApproveStartRequest.self, from: try await request.collectedBody(context))
        } catch {
            throw ServiceError.notValid("The body must hold client_id, payload, device_id, timestamp (integer) and device_signature.")
        }
        return OrchestrationRoutes.response(try await mobileApprove.start(body, origin: RequestOrigin(request, context)))
    }

    /// `GET /v1/devices/{id}/pending[?wait=N]`, device-signed: the inbox push channel.
    func pending(request: Request, context: ServerRequestContext) async throws -> Response {
        let deviceID = context.parameter("deviceID")
        guard request.headers[.countersignDevice] == deviceID,
            let timestamp = request.headers[.countersignTimestamp].flatMap(Int.init),
            let signature = request.headers[.countersignSignature]
        else {
            throw ServiceError(
                .unauthenticated, ErrorCode.invalidToken,
                "Countersign-Device (this path's device id), Countersign-Timestamp (whole seconds) and Countersign-Signature are required.")
        }
        let pathWithQuery = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        let proof = SignedRequest(
            message: DeviceProof.requestMessage(method: request.method.rawValue, pathWithQuery: pathWithQuery, timestamp: timestamp),
            timestamp: timestamp, signature: signature)
        let wait = min(max(request.query("wait").flatMap(Int.init) ?? 0, 0), Self.maximumWait)
        // Subscribed before the first read, so that an approval pushed between that read and the wait is not missed.
        let mailbox = wait > 0 ? await events.subscribe(EventTopic.device(deviceID)) : nil
        let payloads: Result<[[String: String]], any Error>
        do {
            payloads = .success(try await inbox(of: deviceID, proof, waiting: wait, on: mailbox))
        } catch {
            payloads = .failure(error)
        }
        if let mailbox { await events.unsubscribe(mailbox) }
        return try .wire(["approvals": try payloads.get()], cacheControl: "no-store")
    }

    /// What a device signed to read its inbox.
    private struct SignedRequest {
        let message: String
        let timestamp: Int
        let signature: String
    }

    /// The device's pending payloads, once `proof` shows the request is the device's. The device and its
    /// pending approvals are one read, made before the signature is checked and answered only after.
    /// With `mailbox`, a long-poll counted by `openWaits`: when nothing is pending, it waits up to
    /// `seconds` for an approval, and answers the payload it is rung with (or reads again when woken
    /// without one).
    private func inbox(
        of deviceID: String, _ proof: SignedRequest, waiting seconds: Int, on mailbox: EventMailbox?
    ) async throws -> [[String: String]] {
        let (named, pending) = try await storage.approvals.inbox(ofDevice: deviceID, at: clock.now())
        let (device, signatureUse) = try verifier.check(named, message: proof.message, timestamp: proof.timestamp, signature: proof.signature)
        try await storage.commit([.statement(signatureUse)])
        guard device.status == CredentialStatus.active.rawValue else {
            throw ServiceError.deviceRevoked
        }
        guard let mailbox else { return pending.map(\.pushNotification.payload) }
        try await openWaits.openInboxWait(for: deviceID)
        let event = pending.isEmpty ? await Self.nextEvent(on: mailbox, within: .seconds(seconds)) : nil
        await openWaits.closeInboxWait(for: deviceID)
        guard let event else { return pending.map(\.pushNotification.payload) }
        if let rung = ApprovalRung(message: event) { return [rung.payload] }
        return try await storage.approvals.pending(forDevice: deviceID, at: clock.now()).map(\.pushNotification.payload)
    }

    /// `GET /v1/interactions/{id}/events`: one server-sent event when the interaction's approval is
    /// settled (approved, denied, failed, cancelled, expired); keep-alive comments meanwhile.
    func events(request: Request, context: ServerRequestContext) async throws -> Response {
        let interactionID = context.parameter("interactionID")
        let topic = EventTopic.interaction(interactionID)
        // Subscribed before the read, so that a close committed after the read wakes this stream.
        let mailbox = await events.subscribe(topic)
        let wait: InteractionService.ApprovalWait
        let approvalID: String
        let stream: EventStreamID
        do {
            wait = try await interactions.approvalWaitedOn(interactionID, bearer: request.bearerToken)
            guard let waitedOn = wait.approvalID else {
                throw ServiceError(.conflict, ErrorCode.notWaiting, "The interaction is not waiting for a phone.")
            }
            approvalID = waitedOn
            let (opened, ending) = try await openWaits.openEventStream(
                for: interactionID, source: AddressBlock.of(context.clientAddress ?? "an unknown address"))
            stream = opened
            // Wakes the stream this one replaces, so that it ends now (this one looks at its approval again).
            if ending != nil { await events.publish(topic, "") }
        } catch {
            await events.unsubscribe(mailbox)
            throw error
        }
        let (bus, openWaits, clock) = (events, openWaits, clock)
        let (streamEnd, statusRead) = (wait.interaction.expiresAt, wait.status)
        // The stream ends when the closure returns, or fails when the browser has gone and a write throws.
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-store"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            var status = ApprovalStatus.pending
            var failure: (any Error)?
            do {
                // The head goes out at once, not with the first keep-alive 15 s later.
                try await writer.write(ByteBuffer(string: ": open\n\n"))
                if let statusRead {
                    status = statusRead
                } else {
                    status = try await Self.approvalStatus(approvalID, on: storage, clock: clock)
                }
                while status == .pending, clock.now() < streamEnd, !Task.isShuttingDownGracefully {
                    let event = await Self.nextEvent(on: mailbox, within: Self.keepAliveInterval)
                    if event == nil {
                        try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                    }
                    if await openWaits.wasEnded(stream, of: interactionID) { break }
                    // The close of this approval says how it ended; any other wake-up means look again.
                    if let closed = event.flatMap(ApprovalClosed.init(message:)), closed.approvalID == approvalID {
                        status = closed.status
                    } else {
                        status = try await Self.approvalStatus(approvalID, on: storage, clock: clock)
                    }
                }
            } catch {
                failure = error
            }
            await bus.unsubscribe(mailbox)
            let replaced = await openWaits.closeEventStream(stream, of: interactionID)
            if let failure { throw failure }
            // A stream replaced by a newer one, or cut short by the server stopping, ends without an event:
            // the browser opens another (on another instance, behind a balancer).
            guard !replaced, !Task.isShuttingDownGracefully else { return try await writer.finish(nil) }
            // The interaction's time ran out before the approval's: for the browser, it expired.
            if status == .pending { status = .expired }
            try await writer.write(ByteBuffer(string: "event: approval\ndata: {\"status\":\"\(status.rawValue)\"}\n\n"))
            try await writer.finish(nil)
        })
    }

    /// The next event on `mailbox` within `limit`; nil at once when the server begins to stop, so that no
    /// open stream or long-poll holds its shutdown.
    static func nextEvent(on mailbox: EventMailbox, within limit: Duration) async -> String? {
        await cancelWhenGracefulShutdown { await mailbox.next(within: limit) }
    }

    /// The approval's status now; a vanished approval reads as expired.
    static func approvalStatus(_ approvalID: String, on storage: Storage, clock: any WallClock) async throws -> ApprovalStatus {
        try await storage.approvals.status(of: approvalID, at: clock.now())
    }
}

extension HTTPField.Name {
    static let countersignDevice = HTTPField.Name("Countersign-Device")!
    static let countersignTimestamp = HTTPField.Name("Countersign-Timestamp")!
    static let countersignSignature = HTTPField.Name("Countersign-Signature")!
}
