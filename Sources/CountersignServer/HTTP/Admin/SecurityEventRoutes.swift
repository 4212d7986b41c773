import Hummingbird

/// `GET /admin/v1/security-events?user_id=…&kind=…&actor=…&limit=…&after=…`: newest first, a page at a time.
struct SecurityEventRoutes: RouteGroup {
    let verifier: AdminAccess
    let storage: Storage

    func register(on router: Router<ServerRequestContext>) {
        router.adminAPI(verifier).get("security-events", use: list)
    }

    func list(request: Request, context: ServerRequestContext) async throws -> Response {
        let page = try request.listPage()
        let events = try await storage.securityEvents.newest(
            userID: request.query("user_id"), kind: request.query("kind"), actor: request.query("actor"), after: page.after, limit: page.limit)
        return try .wire(["security_events": events])
    }
}
