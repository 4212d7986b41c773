import CountersignCore
import Hummingbird

/// `POST /v1/journeys/{journey_id}/start` and `POST /v1/interactions/{id}/submit`.
struct OrchestrationRoutes: RouteGroup {
    let service: InteractionService

    func register(on router: Router<ServerRequestContext>) {
        let v1 = router.group("v1").add(middleware: StrictJSONMiddleware())
        v1.post("journeys/{journeyID}/start", use: start)
        v1.post("interactions/{interactionID}/submit", use: submit)
    }

    func start(request: Request, context: ServerRequestContext) async throws -> Response {
        let body: StartJourneyRequest
        do {
            body = try WireJSON.request(StartJourneyRequest.self, from: try await request.collectedBody(context))
        } catch {
            throw ServiceError.notValid("The body must be a JSON object with a string 'client_id'.")
        }
        let reply = try await service.start(
            journeyID: context.parameter("journeyID"), request: body, origin: RequestOrigin(request, context))
        return Self.response(reply)
    }

    func submit(request: Request, context: ServerRequestContext) async throws -> Response {
        let reply = try await service.submit(
            interactionID: context.parameter("interactionID"), bearer: request.bearerToken,
            body: try await request.collectedBody(context), origin: RequestOrigin(request, context))
        return Self.response(reply)
    }

    static func response(_ reply: InteractionService.Reply) -> Response {
        .wireEncoded(reply.json, status: reply.isRepeatedAfterError ? .badRequest : .ok, cacheControl: "no-store")
    }
}
