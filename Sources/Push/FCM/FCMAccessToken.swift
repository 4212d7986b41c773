import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore

/// An OAuth2 access token for FCM, obtained with a signed JWT-bearer assertion (RS256, `iss` the
/// service account, `scope` firebase.messaging, `aud` the token URI, valid one hour) and reused
/// until a minute before it expires.
actor FCMAccessToken {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    static let renewalMargin: TimeInterval = 60

    private let account: FCMServiceAccount
    private let client: HTTPClient
    private let now: @Sendable () -> Date
    private let keys = JWTKeyCollection()
    private var current: (token: String, expiresAt: Date)?

    init(account: FCMServiceAccount, client: HTTPClient, now: @escaping @Sendable () -> Date) async {
        self.account = account
        self.client = client
        self.now = now
        await keys.add(rsa: account.privateKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: account.privateKeyID))
    }

    /// The cached token, or a new one when it is about to expire.
    func token() async throws -> String {
        if let current, now() < current.expiresAt.addingTimeInterval(-Self.renewalMargin) { return current.token }
        return try await renew()
    }

    /// Drops the cached token after FCM refused it (401).
    func invalidate() {
        current = nil
    }

    private func renew() async throws -> String {
        let issuedAt = Int(now().timeIntervalSince1970)
        let assertion = try await keys.sign(
            Assertion(iss: account.clientEmail, scope: Self.scope, aud: account.tokenURI, iat: issuedAt, exp: issuedAt + 3600),
            kid: JWKIdentifier(string: account.privateKeyID))
        var request = HTTPClientRequest(url: account.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        request.body = .bytes(ByteBuffer(string: form))
        let reply = try await ProviderReply.exchange(request, with: client)
        guard reply.status == 200, let grant = try? JSONDecoder().decode(Grant.self, from: reply.body) else {
            throw TokenRefused(status: reply.status, body: String(decoding: reply.body.prefix(200), as: UTF8.self))
        }
        current = (grant.accessToken, now().addingTimeInterval(TimeInterval(grant.expiresIn)))
        return grant.accessToken
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

    /// Google's token endpoint refused the assertion.
    struct TokenRefused: Error, CustomStringConvertible {
        let status: UInt
        let body: String
        var description: String { "token endpoint answered \(status): \(body)" }
    }
}
