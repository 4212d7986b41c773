import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import NIOCore

/// Stand-ins for Google's OAuth2 token endpoint and the FCM HTTP v1 send endpoint, over TLS. The token
/// endpoint verifies the RS256 JWT-bearer assertion with the service account's public key (issuer,
/// scope, audience, lifetime) before it issues an access token; the send endpoint accepts only
/// unexpired tokens it issued and checks the message's shape.
public final class FakeGoogle: Sendable {
    /// A message as received, with the verdict the fake gave.
    public struct Message: Sendable {
        public let project: String
        public let accessToken: String?
        /// The `message` object of the body.
        public let body: [String: JSONValueLike]
        public let status: Int
        public let errorCode: String?
    }

    /// `https://127.0.0.1:PORT`: the send base URL.
    public let url: String
    /// The token endpoint: put it in the service account's `token_uri`.
    public var tokenURI: String { url + "/token" }
    public let certificateAuthority: TestCertificateAuthority
    private let server: FakeProviderServer
    private let messages = RequestLog<Message>()
    private let grants = RequestLog<String>()
    private let script = ReplyScript()

    /// `clientEmail` and `publicKeyPEM` describe the service account; `now` judges lifetimes.
    public init(clientEmail: String, publicKeyPEM: String, project: String, now: @escaping @Sendable () -> Date = Date.init) async throws {
        let authority = try TestCertificateAuthority()
        let verifier = JWTKeyCollection()
        await verifier.add(rsa: try Insecure.RSA.PublicKey(pem: publicKeyPEM), digestAlgorithm: .sha256)
        let issued = IssuedTokens()
        certificateAuthority = authority
        let messages = self.messages
        let grants = self.grants
        let script = self.script
        server = try await FakeProviderServer.start(authority: authority) { router in
            router.post("token") { request, context async throws -> Response in
                struct Form: Decodable {
                    let grant_type: String
                    let assertion: String
                }
                let text = String(buffer: try await request.body.collect(upTo: context.maxUploadSize))
                let form = try URLEncodedFormDecoder().decode(Form.self, from: text)
                let audience = "https://\(request.head.authority ?? "")/token"
                guard form.grant_type == "urn:ietf:params:oauth:grant-type:jwt-bearer",
                    let claims = try? await verifier.verify(form.assertion, as: Assertion.self),
                    claims.iss == clientEmail, claims.scope.split(separator: " ").contains("https://www.googleapis.com/auth/firebase.messaging"),
                    claims.aud == audience, claims.exp - claims.iat <= 3600, TimeInterval(claims.exp) > now().timeIntervalSince1970
                else {
                    return try Self.json(["error": "invalid_grant"], status: .badRequest)
                }
                let token = "ya29.fake-\(UUID().uuidString)"
                issued.add(token, expiresAt: now().addingTimeInterval(3600))
                grants.append(token)
                return try Self.json(GrantBody(access_token: token, expires_in: 3600, token_type: "Bearer"))
            }
            router.post("v1/projects/:project/messages:send") { request, context async throws -> Response in
                let sent = Data(try await request.body.collect(upTo: context.maxUploadSize).readableBytesView)
                let body = (try? JSONSerialization.jsonObject(with: sent) as? [String: Any]) ?? [:]
                let message = body["message"] as? [String: Any] ?? [:]
                let bearer = request.bearerToken
                let verdict = Self.verdict(
                    project: context.parameters.get("project") ?? "", expectedProject: project, message: message,
                    authorized: bearer.map { issued.isValid($0, at: now()) } ?? false)
                let (status, code, retryAfter) = try await script.answer(to: verdict.0, verdict.1, token: message["token"] as? String ?? "")
                messages.append(Message(
                    project: context.parameters.get("project") ?? "", accessToken: bearer,
                    body: message.mapValues(JSONValueLike.init), status: status, errorCode: code))
                var response: Response
                if let code {
                    response = try Self.json(
                        ErrorBody(error: .init(code: status, status: code, message: code, details: [.init(errorCode: code)])),
                        status: .init(code: status))
                } else {
                    response = try Self.json(["name": "projects/\(project)/messages/\(UUID().uuidString)"], status: .init(code: status))
                }
                if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
                return response
            }
        }
        url = server.url
    }

    /// Every message so far, oldest first.
    public var received: [Message] { messages.all }
    /// Access tokens issued so far.
    public var issuedTokens: [String] { grants.all }

    /// Answers the next messages (that pass the checks) with `replies`, in order.
    public func script(_ replies: ScriptedReply...) {
        script.append(replies)
    }

    /// Answers the next messages for `registrationToken` (that pass the checks) with `replies`, in order.
    public func script(forRegistrationToken registrationToken: String, _ replies: ScriptedReply...) {
        script.append(replies, forToken: registrationToken)
    }

    public func stop() async {
        await server.stop()
    }

    private static func json(_ body: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(data: try JSONEncoder().encode(body))))
    }

    static func verdict(project: String, expectedProject: String, message: [String: Any], authorized: Bool) -> (Int, String?) {
        guard authorized else { return (401, "UNAUTHENTICATED") }
        guard project == expectedProject else { return (403, "PERMISSION_DENIED") }
        guard let token = message["token"] as? String, !token.isEmpty else { return (400, "INVALID_ARGUMENT") }
        guard let data = message["data"] as? [String: Any], data.values.allSatisfy({ $0 is String }) else {
            return (400, "INVALID_ARGUMENT")
        }
        guard let android = message["android"] as? [String: Any], android["priority"] as? String == "high",
            let ttl = android["ttl"] as? String, ttl.hasSuffix("s"), Double(ttl.dropLast()) != nil
        else { return (400, "INVALID_ARGUMENT") }
        return (200, nil)
    }

    /// The assertion as Google documents it, written out here rather than shared with the gateway, so
    /// that a mistake in the gateway's claims cannot pass its own check.
    struct Assertion: JWTPayload {
        let iss: String
        let scope: String
        let aud: String
        let iat: Int
        let exp: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    struct GrantBody: Encodable {
        let access_token: String
        let expires_in: Int
        let token_type: String
    }

    struct ErrorBody: Encodable {
        struct Body: Encodable {
            let code: Int
            let status: String
            let message: String
            let details: [Detail]
        }
        struct Detail: Encodable {
            let errorCode: String
        }
        let error: Body
    }
}

/// Access tokens the fake issued, with their expiry.
final class IssuedTokens: Sendable {
    private let log = RequestLog<(token: String, expiresAt: Date)>()

    func add(_ token: String, expiresAt: Date) {
        log.append((token, expiresAt))
    }

    func isValid(_ token: String, at time: Date) -> Bool {
        log.all.contains { $0.token == token && $0.expiresAt > time }
    }
}

/// A JSON value as the fake saw it, printable and comparable in tests.
public enum JSONValueLike: Sendable, Equatable {
    case string(String)
    case object([String: JSONValueLike])
    case other(String)

    init(_ value: Any) {
        switch value {
        case let text as String: self = .string(text)
        case let members as [String: Any]: self = .object(members.mapValues(JSONValueLike.init))
        default: self = .other(String(describing: value))
        }
    }
}
