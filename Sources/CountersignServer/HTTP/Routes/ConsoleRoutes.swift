import CountersignCore
import Foundation
import Hummingbird

/// The operators' console: its page and modules at `/console`, and its session at `/console/session`
/// (`ConsoleSessions`). Its screens call the admin API with the session.
struct ConsoleRoutes: RouteGroup {
    let sessions: ConsoleSessions
    private let files: BundledFiles

    init(sessions: ConsoleSessions) throws {
        self.sessions = sessions
        files = try BundledFiles(
            folder: "Browser/console",
            names: ["index.html", "console.css", "console.js", "api.js", "signin.js", "screens.js", "diagram.js", "chart.js"])
    }

    func register(on router: Router<ServerRequestContext>) {
        router.get("console") { _, _ in try files.response(for: "index.html") }
        router.get("console/:file") { _, context in try files.response(for: context.parameters.get("file")) }
        let session = router.group("console/session").add(middleware: StrictJSONMiddleware(typeRequiredWithoutBody: false))
        session.get(use: show)
        session.post(use: signIn)
        session.delete(use: signOut)
    }

    /// The operator signed in, and the CSRF token their page sends with changes.
    struct SessionView: ResponseEncodable {
        struct Operator: Encodable {
            let id: String
            let email: String
            let role: String
        }
        let `operator`: Operator
        let csrfToken: String
        let expiresAt: Date

        init(_ session: ConsoleSessions.Live) {
            `operator` = Operator(id: session.signedIn.id, email: session.signedIn.email, role: session.signedIn.role)
            csrfToken = session.csrfToken
            expiresAt = session.expiresAt
        }

        enum CodingKeys: String, CodingKey {
            case `operator`
            case csrfToken = "csrf_token"
            case expiresAt = "expires_at"
        }
    }

    struct SignInRequest: Decodable {
        let token: String
    }

    func show(request: Request, context: ServerRequestContext) async throws -> Response {
        guard let session = try await sessions.session(of: request) else { throw Self.signedOut }
        return try .wire(SessionView(session), cacheControl: "no-store")
    }

    /// Trades the token the console's sign-in journey ended with for a session cookie.
    func signIn(request: Request, context: ServerRequestContext) async throws -> Response {
        let body = try await request.decodeBody(SignInRequest.self, context)
        let (cookieValue, session) = try await sessions.signIn(token: body.token, from: context.clientAddress ?? "an unknown address")
        var response = try Response.wire(SessionView(session), status: .created, cacheControl: "no-store")
        response.setCookie(sessions.cookie(cookieValue))
        return response
    }

    /// Ends the session; a change, so it needs the CSRF token too (a stranger's page cannot sign one out).
    func signOut(request: Request, context: ServerRequestContext) async throws -> Response {
        guard let session = try await sessions.session(of: request) else { throw Self.signedOut }
        guard sessions.carriesCSRFToken(request, of: session) else {
            throw ServiceError(.forbidden, ErrorCode.forbidden, "Refused: a change without the session's CSRF token.")
        }
        try await sessions.signOut(session)
        var response = Response(status: .noContent)
        response.setCookie(sessions.cookie(""))
        return response
    }

    private static let signedOut = ServiceError(.unauthenticated, ErrorCode.sessionEnded, "Not signed in to the console.")
}
