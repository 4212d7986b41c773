import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import NIOCore

/// A stand-in for APNs over HTTP/2 + TLS that checks each request the way Apple does: the bearer
/// provider token's ES256 signature (with the configured key), its `kid`, `iss` and `iat` age, the
/// headers, the device token's shape and the payload size. It records every request and can be told
/// to answer with any status and reason.
public final class FakeAPNs: Sendable {
    /// One accepted signing key: what Apple knows about a `.p8` key.
    public struct Key: Sendable {
        public let keyID: String
        public let teamID: String
        public let publicKeyPEM: String

        public init(keyID: String, teamID: String, publicKeyPEM: String) {
            self.keyID = keyID
            self.teamID = teamID
            self.publicKeyPEM = publicKeyPEM
        }
    }

    /// A request as received, with the verdict the fake gave.
    public struct Request: Sendable {
        public let httpVersion: Int
        public let deviceToken: String
        public let headers: [String: String]
        public let body: Data
        /// The provider token as sent.
        public let providerToken: String?
        public let status: Int
        public let reason: String?
    }

    /// `https://127.0.0.1:PORT`.
    public let url: String
    public let certificateAuthority: TestCertificateAuthority
    private let server: FakeProviderServer
    private let log = RequestLog<Request>()
    private let script = ReplyScript()

    /// Starts on a free port. `bundleIDs` are the topics it accepts; `now` judges token age.
    public init(keys: [Key], bundleIDs: Set<String>, now: @escaping @Sendable () -> Date = Date.init) async throws {
        let authority = try TestCertificateAuthority()
        let verifier = JWTKeyCollection()
        for key in keys {
            await verifier.add(ecdsa: try ES256PublicKey(pem: key.publicKeyPEM), kid: JWKIdentifier(string: key.keyID))
        }
        let checks = Checks(keys: keys, bundleIDs: bundleIDs, verifier: verifier, now: now)
        self.certificateAuthority = authority
        let log = self.log
        let script = self.script
        server = try await FakeProviderServer.start(authority: authority) { router in
            router.post("3/device/:token") { request, context async throws -> Response in
                let token = context.parameters.get("token") ?? ""
                let body = Data(try await request.body.collect(upTo: context.maxUploadSize).readableBytesView)
                let verdict = await checks.verdict(request, httpVersion: context.httpVersion, deviceToken: token, body: body)
                let (status, reason, retryAfter) = try await script.answer(to: verdict.0, verdict.1, token: token)
                log.append(Request(
                    httpVersion: context.httpVersion, deviceToken: token, headers: request.headerDictionary, body: body,
                    providerToken: request.bearerToken, status: status, reason: reason))
                var headers: HTTPFields = [:]
                if let retryAfter { headers[.retryAfter] = String(retryAfter) }
                var answer = ByteBuffer()
                if let reason {
                    headers[.contentType] = "application/json"
                    answer = ByteBuffer(data: try JSONEncoder().encode(["reason": reason]))
                }
                return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: answer))
            }
        }
        url = server.url
    }

    /// Every request so far, oldest first.
    public var requests: [Request] { log.all }

    /// Answers the next requests (that pass the checks) with `replies`, in order.
    public func script(_ replies: ScriptedReply...) {
        script.append(replies)
    }

    /// Answers the next requests for `deviceToken` (that pass the checks) with `replies`, in order.
    public func script(forDeviceToken deviceToken: String, _ replies: ScriptedReply...) {
        script.append(replies, forToken: deviceToken)
    }

    public func stop() async {
        await server.stop()
    }

    /// Apple's checks, in the order its documentation lists the errors.
    struct Checks: Sendable {
        let keys: [Key]
        let bundleIDs: Set<String>
        let verifier: JWTKeyCollection
        let now: @Sendable () -> Date

        func verdict(_ request: Hummingbird.Request, httpVersion: Int, deviceToken: String, body: Data) async -> (Int, String?) {
            guard httpVersion == 2 else { return (400, "BadRequest: HTTP/2 is required") }
            let headers = request.headerDictionary
            guard let token = headers["authorization"], token.hasPrefix("bearer ") else {
                return (403, "MissingProviderToken")
            }
            if let problem = await providerTokenProblem(String(token.dropFirst("bearer ".count))) { return (403, problem) }
            guard let topic = headers["apns-topic"] else { return (400, "MissingTopic") }
            guard bundleIDs.contains(topic) else { return (400, "TopicDisallowed") }
            guard headers["apns-push-type"] == "alert" else { return (400, "InvalidPushType") }
            guard headers["apns-priority"] == "10" else { return (400, "BadPriority") }
            guard headers["apns-expiration"].flatMap(Int.init) != nil else { return (400, "BadExpirationDate") }
            guard let collapseID = headers["apns-collapse-id"], collapseID.utf8.count <= 64 else {
                return (400, "BadCollapseId")
            }
            guard headers["apns-id"].flatMap(UUID.init(uuidString:)) != nil else { return (400, "BadMessageId") }
            guard deviceToken.count == 64, deviceToken.allSatisfy(\.isHexDigit) else { return (400, "BadDeviceToken") }
            guard body.count <= 4096 else { return (413, "PayloadTooLarge") }
            guard let payload = try? JSONSerialization.jsonObject(with: body) as? [String: Any], payload["aps"] is [String: Any] else {
                return (400, "PayloadEmpty")
            }
            return (200, nil)
        }

        private func providerTokenProblem(_ token: String) async -> String? {
            guard let claims = try? await verifier.verify(token, as: ProviderClaims.self),
                let header = try? JSONDecoder().decode(Header.self, from: Self.segment(0, of: token)),
                keys.contains(where: { $0.keyID == header.kid && $0.teamID == claims.iss })
            else { return "InvalidProviderToken" }
            let age = now().timeIntervalSince1970 - TimeInterval(claims.iat)
            guard age <= 3600 else { return "ExpiredProviderToken" }
            guard age >= -60 else { return "InvalidProviderToken" }
            return nil
        }

        static func segment(_ index: Int, of token: String) -> Data {
            var text = token.split(separator: ".").dropFirst(index).first.map(String.init) ?? ""
            text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            text += String(repeating: "=", count: (4 - text.count % 4) % 4)
            return Data(base64Encoded: text) ?? Data()
        }
    }

    /// `iat` must be a whole number: a fractional one does not decode.
    struct ProviderClaims: JWTPayload {
        let iss: String
        let iat: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    struct Header: Decodable {
        let kid: String
        let alg: String
    }
}
