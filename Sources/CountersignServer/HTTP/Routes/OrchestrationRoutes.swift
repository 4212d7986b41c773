import CountersignCore
import Vapor

/// `POST /v1/journeys/{journey_id}/start` and `POST /v1/interactions/{id}/submit`.
struct OrchestrationRoutes: RouteCollection {
    let service: InteractionService

    func boot(routes: any RoutesBuilder) throws {
        let v1 = routes.grouped("v1").grouped(StrictJSONMiddleware())
        v1.post("journeys", ":journeyID", "start", use: start)
        v1.post("interactions", ":interactionID", "submit", use: submit)
    }

    func start(request: Request) async throws -> Response {
        let body: StartJourneyRequest
        do {
            body = try WireJSON.request(StartJourneyRequest.self, from: request.body.data)
        } catch {
            throw ServiceError.notValid("The body must be a JSON object with a string 'client_id'.")
        }
        let reply = try await service.start(journeyID: request.parameters.get("journeyID")!, request: body, origin: RequestOrigin(request))
        return Self.response(reply)
    }

    func submit(request: Request) async throws -> Response {
        let reply = try await service.submit(
            interactionID: request.parameters.get("interactionID")!,
            bearer: request.headers.bearerAuthorization?.token,
            body: request.body.data, origin: RequestOrigin(request))
        return Self.response(reply)
    }

    static func response(_ reply: InteractionService.Reply) -> Response {
        .wireEncoded(reply.json, status: reply.isRepeatedAfterError ? .badRequest : .ok, cacheControl: "no-store")
    }
}
