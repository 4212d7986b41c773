import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore

/// An OAuth2 access token for FCM, obtained with a signed JWT-bearer assertion (RS256, `iss` the
/// service account, `scope` firebase.messaging, `aud` the token URI, valid one hour) and reused
/// until a minute before it expires. A request for one is given `timeLimit` seconds, an attempt's: the
/// sends waiting for it are cut short at their own limit anyway, and the next attempt asks again.
struct FCMAccessToken: Sendable {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    static let renewalMargin: TimeInterval = 60

    let cache: CachedCredential

    init(account: FCMServiceAccount, client: HTTPClient, timeLimit: TimeInterval, now: @escaping @Sendable () -> Date) async {
        let keys = JWTKeyCollection()
        await keys.add(rsa: account.privateKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: account.privateKeyID))
        cache = CachedCredential(now: now) {
            let grant = try await Self.requestGrant(for: account, signedWith: keys, client: client, timeLimit: timeLimit, now: now())
            return (grant.accessToken, now().addingTimeInterval(TimeInterval(grant.expiresIn) - Self.renewalMargin))
        }
    }

    /// Exchanges a freshly signed JWT-bearer assertion for an access token.
    private static func requestGrant(
        for account: FCMServiceAccount, signedWith keys: JWTKeyCollection, client: HTTPClient, timeLimit: TimeInterval, now: Date
    ) async throws -> Grant {
        let issuedAt = Int(now.timeIntervalSince1970)
        let assertion = try await keys.sign(
            Assertion(iss: account.clientEmail, scope: scope, aud: account.tokenURI, iat: issuedAt, exp: issuedAt + 3600),
            kid: JWKIdentifier(string: account.privateKeyID))
        var request = HTTPClientRequest(url: account.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        request.body = .bytes(ByteBuffer(string: form))
        let reply = try await ProviderReply.exchange(request, with: client, trust: account.trust, timeLimit: timeLimit)
        guard reply.status == 200, let grant = try? JSONDecoder().decode(Grant.self, from: reply.body) else {
            throw TokenRefused(status: reply.status, error: OAuthError.code(in: reply.body))
        }
        return grant
    }

    struct Assertion: JWTPayload {
        let iss: String
        let scope: String
        let aud: String
        let iat: Int
        let exp: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    struct Grant: Decodable {
        let accessToken: String
        let expiresIn: Int
        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case expiresIn = "expires_in"
        }
    }

    /// Google's token endpoint refused the assertion: its status and its OAuth `error` code, if it sent
    /// one. Nothing else of the answer is kept, so no reply of whatever a `token_uri` names is shown back.
    struct TokenRefused: Error, CustomStringConvertible {
        let status: UInt
        let error: String?
        var description: String { "token endpoint answered \(status)" + (error.map { ": \($0)" } ?? "") }
        /// Whether asking again cannot help: a redirect (not followed) or a `4xx` refusal such as a revoked
        /// key's `400 invalid_grant`, but for `408` and `429`. Anything else (`5xx`, a `200` whose body is
        /// no grant) may pass.
        var isFinal: Bool { (300...499).contains(status) && status != 408 && status != 429 }
    }

    /// The part of an OAuth error answer (RFC 6749 §5.2) that is kept: its `error` code, when it is one
    /// (a short word of ASCII letters and underscores, such as `invalid_grant`).
    private struct OAuthError: Decodable {
        let error: String

        static func code(in body: Data) -> String? {
            guard let code = (try? JSONDecoder().decode(Self.self, from: body))?.error, (1...64).contains(code.count),
                code.allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "_") })
            else { return nil }
            return code
        }
    }
}
