import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import Journeys
import NIOCore

/// The phone's and the browser's approval endpoints: mobile approve start, the inbox, and the
/// interaction events stream.
struct ApprovalRoutes: RouteGroup {
    let mobileApprove: MobileApproveService
    let inbox: InboxService
    let approvalWaits: ApprovalWaitService

    /// How long an inbox request may be held open at most.
    static let maximumWait = 30

    func register(on router: Router<ServerRequestContext>) {
        let v1 = router.group("v1").add(middleware: StrictJSONMiddleware())
        v1.post("mobile-approve/start", use: startMobileApprove)
        v1.get("devices/:deviceID/pending", use: pending)
        v1.get("interactions/{interactionID}/events", use: events)
    }

    func startMobileApprove(request: Request, context: ServerRequestContext) async throws -> Response {
        let body: MobileApproveStartRequest
        do {
            body = try WireJSON.request(
                MobileApproveStartRequest.self, from: try await request.collectedBody(context), parsed: context.parsedBody)
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
        let proof = InboxService.SignedRequest(
            message: DeviceProof.requestMessage(method: request.method.rawValue, pathWithQuery: pathWithQuery, timestamp: timestamp),
            timestamp: timestamp, signature: signature)
        let wait = min(max(request.query("wait").flatMap(Int.init) ?? 0, 0), Self.maximumWait)
        let payloads = try await inbox.pending(for: deviceID, proof, waiting: wait)
        return try .wire(["approvals": payloads], cacheControl: "no-store")
    }

    /// `GET /v1/interactions/{id}/events`: one server-sent event when the interaction's approval is
    /// settled (approved, denied, failed, cancelled, expired); keep-alive comments meanwhile.
    func events(request: Request, context: ServerRequestContext) async throws -> Response {
        let wait = try await approvalWaits.open(
            context.parameter("interactionID"), bearer: request.bearerToken,
            source: AddressBlock.of(context.clientAddress ?? "an unknown address"))
        let approvalWaits = approvalWaits
        // The stream ends when the closure returns, or fails when the browser has gone and a write throws.
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-store"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            let status = try await approvalWaits.outcome(
                of: wait,
                // The head goes out at once, not with the first keep-alive 15 s later.
                opened: { try await writer.write(ByteBuffer(string: ": open\n\n")) },
                keepAlive: { try await writer.write(ByteBuffer(string: ": keep-alive\n\n")) })
            // A stream replaced by a newer one, or cut short by the server stopping, ends without an event:
            // the browser opens another (on another instance, behind a balancer).
            if let status {
                try await writer.write(ByteBuffer(string: "event: approval\ndata: {\"status\":\"\(status.rawValue)\"}\n\n"))
            }
            try await writer.finish(nil)
        })
    }
}

extension HTTPField.Name {
    static let countersignDevice = HTTPField.Name("Countersign-Device")!
    static let countersignTimestamp = HTTPField.Name("Countersign-Timestamp")!
    static let countersignSignature = HTTPField.Name("Countersign-Signature")!
}
