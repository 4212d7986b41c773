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
            body = try WireJSON.request(StartJourneyRequest.self, from: try await request.collectedBody(context), parsed: context.parsedBody)
        } catch {
            throw ServiceError.notValid("The body must be a JSON object with a string 'client_id'.")
        }
        let reply = try await service.start(
            journeyID: context.parameter("journeyID"), request: body, origin: RequestOrigin(request, context))
        return Self.response(reply)
    }

    func submit(request: Request, context: ServerRequestContext) async throws -> Response {
        let body = try await request.collectedBody(context)
        // Refused only once the token holds: a wrong token is told so whatever the body.
        let response = Result { () throws -> ClientResponse in
            guard body.readableBytes > 0 else { throw ServiceError.notValid("The request body is empty.") }
            do {
                return try WireJSON.request(ClientResponse.self, from: body, parsed: context.parsedBody)
            } catch {
                throw ServiceError.notValid("The body must be a JSON object with a string 'option' and optional 'data'.")
            }
        }
        let reply = try await service.submit(
            interactionID: context.parameter("interactionID"), bearer: request.bearerToken, response: response,
            origin: RequestOrigin(request, context))
        return Self.response(reply)
    }

    static func response(_ reply: InteractionService.Reply) -> Response {
        .wireEncoded(reply.json, status: reply.isRepeatedAfterError ? .badRequest : .ok, cacheControl: "no-store")
    }
}
