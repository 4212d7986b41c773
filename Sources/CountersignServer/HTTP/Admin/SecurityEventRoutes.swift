import Vapor

/// `GET /admin/v1/security-events?user_id=…&kind=…&limit=…&after=…`: newest first, a page at a time.
struct SecurityEventRoutes: RouteCollection {
    let verifier: AdminKeyVerifier
    let storage: Storage

    func boot(routes: any RoutesBuilder) throws {
        routes.adminAPI(verifier, "security-events").get(use: list)
    }

    func list(request: Request) async throws -> Response {
        let page = try request.listPage()
        let events = try await storage.securityEvents.newest(
            userID: request.query[String.self, at: "user_id"], kind: request.query[String.self, at: "kind"], after: page.after, limit: page.limit)
        return try .wire(["security_events": events])
    }
}
