import CountersignCore
import Foundation
import JWTKit
import Logging

/// `private_key_jwt` (OpenID Connect Core §9, RFC 7523 §3) at the OpenID endpoints, the only client
/// authentication they take (FAPI-CIBA): an assertion signed ES256 or PS256 with one of the backend
/// client's registered keys, `iss` = `sub` = its id, for this server, at most an hour ahead of its expiry,
/// its `jti` used once. Any failure is `invalid_client`; why is logged, never answered.
struct ClientAuthentication: Sendable {
    let storage: Storage
    /// The server's issuer URL: an assertion's audience is it, or the endpoint's own URL.
    let issuer: String
    let clock: any WallClock

    static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// The longest an assertion may be valid for, from now.
    static let longestLifetime: TimeInterval = 3600

    /// The backend client the form's assertion authenticates, at the endpoint `path` (e.g. `/oauth2/token`).
    func authenticate(_ form: [String: String], at path: String, logger: Logger) async throws -> AuthenticatedClient {
        do {
            return try await verify(form, at: path)
        } catch let refusal as Refusal {
            logger.info("client authentication refused", metadata: ["reason": "\(refusal.reason)"])
            throw OAuthError.invalidClient
        }
    }

    /// Why an assertion was refused, for the log. It never quotes the assertion.
    private struct Refusal: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private func verify(_ form: [String: String], at path: String) async throws -> AuthenticatedClient {
        let assertion = form["client_assertion"].flatMap { $0.utf8.count <= 16 * 1024 ? $0 : nil }
        let unverified = assertion.flatMap { try? DefaultJWTParser().parse(Array($0.utf8), as: ClientAssertionClaims.self) }
        // The client the request names, before anything is checked: a web or native client is told that these
        // endpoints are not for it, whatever else it sent.
        let named = form["client_id"] ?? unverified?.payload.iss.value
        guard let clientID = named, ClientRecord.isValidID(clientID) else { throw Refusal("no client id of 1 to 64 letters, digits, - or _") }
        if let other = form["client_id"], let issuer = unverified?.payload.iss.value, other != issuer {
            throw Refusal("client_id is not the assertion's issuer")
        }
        let backendClient = try await storage.clients.backendClient(clientID)
        if backendClient == nil, try await storage.clients.client(clientID) != nil {
            throw OAuthError(status: .badRequest, code: "unauthorized_client", description: "Only a backend client may use this endpoint.")
        }
        guard form["client_assertion_type"] == Self.assertionType else { throw Refusal("no client_assertion_type of jwt-bearer") }
        guard let assertion, let unverified else { throw Refusal("no client_assertion that is a JWT of the expected claims") }
        // Checked before any key is tried: JWTKit would take the header's word for an RSA key's algorithm.
        guard let alg = unverified.header.alg, BackendClientRegistration.signingAlgorithms.contains(alg) else {
            throw Refusal("the assertion is signed with \(unverified.header.alg.map { String($0.prefix(16)) } ?? "no algorithm"), not ES256 or PS256")
        }
        guard let (client, backend) = backendClient else { throw Refusal("no backend client '\(clientID)'") }
        let claims: ClientAssertionClaims
        let keys: JWTKeyCollection
        do {
            keys = try await JWTKeyCollection().add(jwks: JSONDecoder().decode(JWKS.self, from: Data(backend.jwks.utf8)))
            claims = try await keys.verify(assertion, as: ClientAssertionClaims.self, iteratingKeys: unverified.header.kid == nil)
        } catch {
            throw Refusal("the assertion's signature is not one of client '\(clientID)''s keys")
        }
        guard claims.sub.value == clientID else { throw Refusal("the assertion's sub is not its iss") }
        let audiences = [issuer, issuer + path]
        guard claims.aud.value.contains(where: audiences.contains) else { throw Refusal("the assertion is for another audience") }
        let now = clock.now()
        guard claims.exp.value > now else { throw Refusal("the assertion expired") }
        guard claims.exp.value <= now.addingTimeInterval(Self.longestLifetime) else {
            throw Refusal("the assertion is valid for more than \(Int(Self.longestLifetime)) seconds")
        }
        if let notBefore = claims.nbf?.value, notBefore > now { throw Refusal("the assertion is not valid yet") }
        let jti = claims.jti.value
        guard !jti.isEmpty, jti.utf8.count <= 256 else { throw Refusal("the assertion has no jti of 1 to 256 bytes") }
        // Kept until the assertion expires: after that it is refused as expired.
        let used = storage.usedDeviceSignatures.record(Self.fingerprint("client_assertion", clientID: clientID, jti: jti), until: claims.exp.value)
        guard try await storage.db.first(used.query) != nil else { throw Refusal("the assertion's jti was used before") }
        return AuthenticatedClient(client: client, backend: backend, keys: keys)
    }

    /// The parameters of a signed request object (CIBA Core §7.1.1): signed by `client` with its
    /// registered algorithm (else ES256 or PS256), for this server, `iss` the client, with `exp`, `iat`,
    /// `nbf` and `jti`, at most an hour between `nbf` and `exp`, used once. Anything else is `invalid_request`;
    /// why is logged.
    func requestObjectClaims(_ requestObject: String, of client: AuthenticatedClient, logger: Logger) async throws -> [String: JSONValue] {
        do {
            return try await verifyRequestObject(requestObject, of: client)
        } catch let refusal as Refusal {
            logger.info("request object refused", metadata: ["reason": "\(refusal.reason)"])
            throw OAuthError.invalidRequest("The 'request' object is refused: it must be signed by this client for this server, and be fresh.")
        }
    }

    private func verifyRequestObject(_ requestObject: String, of authenticated: AuthenticatedClient) async throws -> [String: JSONValue] {
        let clientID = authenticated.client.id
        guard requestObject.utf8.count <= 64 * 1024,
            let header = try? DefaultJWTParser().parse(Array(requestObject.utf8), as: RequestObjectClaims.self).header
        else { throw Refusal("the request object is not a JWS of a JSON object") }
        let allowed = authenticated.backend.requestSigningAlg.map { [$0] } ?? BackendClientRegistration.signingAlgorithms
        guard let alg = header.alg, allowed.contains(alg) else {
            throw Refusal("the request object is signed with \(header.alg.map { String($0.prefix(16)) } ?? "nothing")")
        }
        let claims: [String: JSONValue]
        do {
            claims = try await authenticated.keys.verify(requestObject, as: RequestObjectClaims.self, iteratingKeys: header.kid == nil).claims
        } catch {
            throw Refusal("the request object's signature is not one of client '\(clientID)''s keys")
        }
        guard claims["iss"]?.stringValue == clientID else { throw Refusal("the request object's iss is not the client") }
        let audiences = claims["aud"]?.arrayValue?.compactMap(\.stringValue) ?? [claims["aud"]?.stringValue].compactMap { $0 }
        guard audiences.contains(issuer) else { throw Refusal("the request object is for another audience") }
        guard case .number(let exp)? = claims["exp"], case .number(let nbf)? = claims["nbf"], case .number = claims["iat"],
            let jti = claims["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 256
        else { throw Refusal("the request object lacks exp, nbf, iat or jti") }
        let now = clock.now().timeIntervalSince1970
        guard nbf <= now, exp > now, exp - nbf <= Self.longestLifetime else {
            throw Refusal("the request object is not valid now, or for more than \(Int(Self.longestLifetime)) seconds")
        }
        let used = storage.usedDeviceSignatures.record(
            Self.fingerprint("request_object", clientID: clientID, jti: jti), until: Date(timeIntervalSince1970: exp))
        guard try await storage.db.first(used.query) != nil else { throw Refusal("the request object's jti was used before") }
        return claims.filter { !["iss", "aud", "exp", "nbf", "iat", "jti", "sub"].contains($0.key) }
    }

    /// What the used-once record keeps of an assertion: its client and jti, hashed, in a namespace of
    /// its own beside the device signatures.
    static func fingerprint(_ kind: String, clientID: String, jti: String) -> String {
        SecretDigest.hex("\(kind)\n\(clientID)\n\(jti)")
    }
}

/// A backend client whose assertion verified.
struct AuthenticatedClient: Sendable {
    let client: ClientRecord
    let backend: BackendClientRecord
    /// Its public keys, read once per request: its request object is checked with them too.
    let keys: JWTKeyCollection
}

/// The claims of a client assertion; `ClientAuthentication` checks them against its own clock.
struct ClientAssertionClaims: JWTPayload {
    let iss: IssuerClaim
    let sub: SubjectClaim
    let aud: AudienceClaim
    let exp: ExpirationClaim
    let jti: IDClaim
    let nbf: NotBeforeClaim?
    let iat: IssuedAtClaim?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// A request object's claims, every one as it came; `ClientAuthentication` checks them.
struct RequestObjectClaims: JWTPayload {
    let claims: [String: JSONValue]

    init(from decoder: any Decoder) throws {
        claims = try [String: JSONValue](from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        try claims.encode(to: encoder)
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
