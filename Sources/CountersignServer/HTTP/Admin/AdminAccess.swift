import CountersignCore
import Hummingbird

/// Who may use the admin API: automation with the admin key as bearer token, and the console's operators
/// with their session (`ConsoleSessions`). The key comes from `COUNTERSIGN_ADMIN_KEY`, or is generated at
/// first start, shown once, and kept only as a SHA-256 hash.
struct AdminAccess: Sendable {
    private let keyHash: String
    let securityEvents: SecurityEvents
    let throttle: AdminGuessThrottle
    var sessions: ConsoleSessions?

    /// Settles which key is valid; `announce` shows a newly generated key to the operator.
    static func bootstrap(
        configuredKey: String?, failuresPerMinute: Int, storage: Storage, clock: any WallClock, securityEvents: SecurityEvents,
        announce: @Sendable (String) -> Void
    ) async throws -> AdminAccess {
        let throttle = AdminGuessThrottle(allowed: failuresPerMinute, clock: clock)
        if let configuredKey {
            return AdminAccess(keyHash: SecretDigest.hex(configuredKey), securityEvents: securityEvents, throttle: throttle)
        }
        let secrets = storage.serverSecrets
        if let stored = try await secrets.adminKeyHash() { return AdminAccess(keyHash: stored, securityEvents: securityEvents, throttle: throttle) }
        let key = SecureRandom.identifier(prefix: "csk")
        try await secrets.insertAdminKeyHash(SecretDigest.hex(key), id: SecureRandom.identifier(prefix: "adm"), at: clock.now())
        announce(key)
        return AdminAccess(keyHash: SecretDigest.hex(key), securityEvents: securityEvents, throttle: throttle)
    }

    static let recordedPathLength = 128

    func accepts(_ key: String) -> Bool {
        SecretDigest.matches(key, storedHex: keyHash)
    }

    /// Records a request refused for its key as a security event: where it went (the path's first
    /// `recordedPathLength` characters, so that a stranger's long paths do not fill the table) and from
    /// where, never the key it tried.
    func recordRefusal(of request: Request, from source: String, keyGiven: Bool) async {
        let path = request.uri.path
        let shownPath = path.count > Self.recordedPathLength ? path.prefix(Self.recordedPathLength) + "…" : path
        let detail = "\(request.method.rawValue) \(shownPath) with \(keyGiven ? "a wrong" : "no") admin key from \(source)"
        // Stored once a minute per address block: a new IPv6 address of one /64 for every try is one source.
        try? await securityEvents.recordNow(.adminAuthenticationFailed, detail: detail, source: AddressBlock.of(source))
    }
}

extension Router<ServerRequestContext> {
    /// `/admin/v1` (then `path`): the admin key as bearer token, and bodies held to the strict JSON rules.
    func adminAPI(_ verifier: AdminAccess, _ path: String = "") -> RouterGroup<ServerRequestContext> {
        group(RouterPath("admin/v1/" + path)).add(middleware: AdminAuthenticationMiddleware(verifier: verifier))
            .add(middleware: StrictJSONMiddleware(typeRequiredWithoutBody: false))
    }
}

/// Lets a request through with the admin key as its bearer token (none from a source that sent too many
/// wrong keys lately, `AdminGuessThrottle`), or with a console session: any operator's to read, an admin's
/// with the session's CSRF token to change. Security events the request records name who made it.
struct AdminAuthenticationMiddleware: RouterMiddleware {
    let verifier: AdminAccess

    func handle(
        _ request: Request, context: ServerRequestContext, next: (Request, ServerRequestContext) async throws -> Response
    ) async throws -> Response {
        let address = context.clientAddress ?? "an unknown address"
        let source = AddressBlock.of(address)
        var response: Response
        if request.headers[.authorization] == nil, let sessions = verifier.sessions, request.cookies[sessions.cookieName] != nil {
            let session = try await consoleSession(request, sessions: sessions, source: source)
            response = try await AdminActor.$current.withValue(session.signedIn.email) { try await next(request, context) }
        } else {
            response = try await adminKeyRequest(request, context: context, source: source, address: address, next: next)
        }
        // Users, devices and evidence are personal data: no cache on the way keeps them.
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }

    private func adminKeyRequest(
        _ request: Request, context: ServerRequestContext, source: String, address: String,
        next: (Request, ServerRequestContext) async throws -> Response
    ) async throws -> Response {
        if let seconds = await verifier.throttle.retryAfter(for: source) {
            throw ServiceError(.tooSoon(retryAfter: seconds), ErrorCode.rateLimited, "Too many wrong admin keys from this address; try again in \(seconds) s.")
        }
        let key = request.bearerToken
        guard let key, verifier.accepts(key) else {
            await verifier.throttle.countFailure(of: source)
            await verifier.recordRefusal(of: request, from: address, keyGiven: key != nil)
            throw ServiceError(.unauthenticated, ErrorCode.invalidToken, "A valid admin key is required.")
        }
        return try await AdminActor.$current.withValue(AdminActor.adminKey) { try await next(request, context) }
    }

    /// The request's live console session, when it may do what it asks.
    private func consoleSession(_ request: Request, sessions: ConsoleSessions, source: String) async throws -> ConsoleSessions.Live {
        guard let session = try await sessions.session(of: request) else {
            throw ServiceError(.unauthenticated, ErrorCode.sessionEnded, "The console session ended; sign in again.")
        }
        guard request.method != .get, request.method != .head else { return session }
        let refusal: String
        if !sessions.carriesCSRFToken(request, of: session) {
            refusal = "without the session's CSRF token"
        } else if session.role != .admin {
            refusal = "as an auditor, who reads and changes nothing"
        } else {
            return session
        }
        try? await AdminActor.$current.withValue(session.signedIn.email) {
            try await verifier.securityEvents.recordNow(
                .consoleRefused,
                detail: "\(session.signedIn.email) was refused \(request.method.rawValue) \(request.uri.path.prefix(AdminAccess.recordedPathLength)) \(refusal)",
                source: session.signedIn.id + "\n" + source)
        }
        throw ServiceError(.forbidden, ErrorCode.forbidden, "Refused: a change \(refusal).")
    }
}
