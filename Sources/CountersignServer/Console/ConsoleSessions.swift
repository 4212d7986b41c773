import CountersignCore
import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// The console's sessions (DESIGN.md §8): an operator's browser trades the token its sign-in journey
/// ended with for a session cookie, `HttpOnly` and `SameSite=Strict`, that lasts `longest` at most and
/// `idle` without use (`COUNTERSIGN_CONSOLE_IDLE_TIMEOUT`, at most `longestIdle`). Writes also carry the
/// session's CSRF token, which only a page of the server's own origin can read (`GET /console/session`).
struct ConsoleSessions: Sendable {
    static let longest: TimeInterval = 12 * 3600
    static let longestIdle: TimeInterval = 30 * 60
    /// How old a sign-in token may be when it is traded.
    static let tokenAge: TimeInterval = 120
    /// A session's last use is written at most this often (and at least twice per idle time).
    static let touchInterval: TimeInterval = 60
    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!

    let storage: Storage
    let clock: any WallClock
    let tokenIssuer: TokenIssuer
    let securityEvents: SecurityEvents
    let idle: TimeInterval
    /// The server's public URL, the tokens' issuer.
    let issuer: String
    /// Whether the cookie is `Secure` (in production, or when the public URL is https); `__Host-` then
    /// keeps it to this host.
    let secure: Bool

    var cookieName: String { secure ? "__Host-countersign_console" : "countersign_console" }

    /// A session that is live, and whose operator still is one.
    struct Live: Sendable {
        let idHash: String
        let csrfToken: String
        let expiresAt: Date
        let signedIn: OperatorRecord

        var role: OperatorRole? { OperatorRole(rawValue: signedIn.role) }
    }

    /// What a console sign-in must have proven: the phone's key and biometrics, and the code the page showed.
    static let requiredMethods: Set = ["hwk", "mobile_biometrics", "code_otp"]

    /// Opens a session for the operator whose sign-in `token` names: issued by this server to the console's
    /// web client at the end of its sign-in journey with number matching, at most `tokenAge` ago, approved
    /// on a phone enrolled through the console's own native client, and traded once.
    func signIn(token: String, from source: String) async throws -> (cookieValue: String, session: Live) {
        guard let claims = try? await tokenIssuer.verifyIssued(token, as: TokenClaims.self), claims.iss == issuer,
            claims.aud == ConsoleApplication.webClientID, claims.journeyID == ConsoleApplication.signInJourney,
            Self.requiredMethods.isSubset(of: claims.amr)
        else { throw ServiceError(.unauthenticated, ErrorCode.invalidToken, "That is no console sign-in token of this server.") }
        let now = clock.now()
        guard now.timeIntervalSince1970 < TimeInterval(claims.exp), now.timeIntervalSince1970 - TimeInterval(claims.iat) <= Self.tokenAge else {
            throw ServiceError(.unauthenticated, ErrorCode.invalidToken, "The sign-in is too old; sign in again.")
        }
        let spent = storage.usedDeviceSignatures.record(
            SecretDigest.hex("console_sign_in\n\(claims.jti)"), until: Date(timeIntervalSince1970: TimeInterval(claims.exp)))
        guard try await storage.db.first(spent.query) != nil else {
            throw ServiceError(.unauthenticated, ErrorCode.invalidToken, "That sign-in was used already; sign in again.")
        }
        // A phone enrolled for the same person through a bank's app (whose enrollment the console does not
        // control) approves that app's requests, not the console's.
        guard let deviceID = claims.deviceID, let device = try await storage.devices.find(deviceID), device.isActive,
            device.userID == claims.sub, device.clientID == ConsoleApplication.phoneClientID
        else {
            try await securityEvents.recordNow(
                .consoleRefused, userID: claims.sub, deviceID: claims.deviceID,
                detail: "'\(claims.externalUserID)' signed in to the console with a phone not enrolled as an operator's", source: source)
            throw ServiceError(.forbidden, ErrorCode.forbidden, "Approve the console's sign-in on the phone you enrolled as an operator.")
        }
        guard let signedIn = try await storage.operators.find(email: claims.externalUserID) else {
            try await securityEvents.recordNow(
                .consoleRefused, userID: claims.sub, detail: "'\(claims.externalUserID)' signed in to the console, but is no operator", source: source)
            throw ServiceError(.forbidden, ErrorCode.forbidden, "'\(claims.externalUserID)' is not an operator of this server.")
        }
        let secret = SecureRandom.challenge()
        let record = ConsoleSessionRecord(
            idHash: SecretDigest.hex(secret), operatorID: signedIn.id, createdAt: now, lastUsedAt: now, expiresAt: now.addingTimeInterval(Self.longest))
        try await AdminActor.$current.withValue(signedIn.email) {
            try await securityEvents.recording(
                .consoleSignedIn, userID: claims.sub, deviceID: claims.deviceID, detail: "\(signedIn.email) signed in to the console as \(signedIn.role)"
            ) { storage in
                try await storage.consoleSessions.deleteEnded(at: now, usedBefore: now.addingTimeInterval(-idle))
                try await storage.consoleSessions.insert(record)
            }
        }
        return (secret, Live(idHash: record.idHash, csrfToken: Self.csrfToken(of: secret), expiresAt: record.expiresAt, signedIn: signedIn))
    }

    /// The live session the request's cookie names, its last use moved to now; nil without one.
    func session(of request: Request) async throws -> Live? {
        guard let secret = request.cookies[cookieName]?.value, !secret.isEmpty, secret.utf8.count <= 64 else { return nil }
        let now = clock.now()
        let idHash = SecretDigest.hex(secret)
        guard let (session, signedIn) = try await storage.consoleSessions.live(
            idHash: idHash, at: now, usedSince: now.addingTimeInterval(-idle))
        else { return nil }
        if now.timeIntervalSince(session.lastUsedAt) >= min(Self.touchInterval, idle / 2) {
            try await storage.consoleSessions.touch(idHash: idHash, at: now)
        }
        return Live(idHash: idHash, csrfToken: Self.csrfToken(of: secret), expiresAt: session.expiresAt, signedIn: signedIn)
    }

    /// Ends the session (sign-out).
    func signOut(_ session: Live) async throws {
        try await AdminActor.$current.withValue(session.signedIn.email) {
            try await securityEvents.recording(.consoleSignedOut, detail: "\(session.signedIn.email) signed out of the console") { storage in
                try await storage.consoleSessions.delete(idHash: session.idHash)
            }
        }
    }

    /// Whether `request` carries the session's CSRF token.
    func carriesCSRFToken(_ request: Request, of session: Live) -> Bool {
        guard let given = request.headers[Self.csrfHeader] else { return false }
        return SecretDigest.matches(given, storedHex: SecretDigest.hex(session.csrfToken))
    }

    /// Derived from the cookie's secret, so that it is never stored; it does not reveal the secret.
    static func csrfToken(of secret: String) -> String {
        LenientBase64.urlEncoded(Array(SHA256.hash(data: Data("countersign-console-csrf\n\(secret)".utf8))))
    }

    /// The cookie that holds `value`, or that clears it (`value` empty).
    func cookie(_ value: String) -> Cookie {
        Cookie(name: cookieName, value: value, maxAge: value.isEmpty ? 0 : Int(Self.longest), path: "/", secure: secure, httpOnly: true, sameSite: .strict)
    }
}
