import CountersignCore
import Foundation
import JWTKit

/// The checks of a backend client's registration (DESIGN.md §7 "Clients"): its public keys, how it learns
/// of answers, whether its requests must be signed, and the `authorization_details` types it may send.
/// Every refusal names the field and why, and nothing is stored until all of them pass.
enum BackendClientRegistration {
    /// The algorithms a backend client signs with: its assertions and, when it must, its request objects.
    static let signingAlgorithms = ["ES256", "PS256"]
    /// Keys a client may register; a bank rotating keys needs two or three.
    static let mostKeys = 10
    /// The shortest RSA modulus accepted, in bits.
    static let shortestRSAModulus = 2048

    /// What `body` registers for backend client `clientID`. `development`: a notification endpoint may
    /// be plain http on the loopback.
    static func record(
        of body: CreateClientRequest, clientID: String, knownDetailTypes: Set<String>, development: Bool
    ) async throws -> BackendClientRecord {
        guard let jwks = body.jwks else { throw ServiceError.notValid("A backend client needs 'jwks': its public keys.") }
        try await checkKeySet(jwks)
        guard let mode = body.tokenDeliveryMode.flatMap(TokenDeliveryMode.init(rawValue:)) else {
            throw ServiceError.notValid("'backchannel_token_delivery_mode' must be poll or ping (push is not offered).")
        }
        let endpoint = try notificationEndpoint(body.notificationEndpoint, mode: mode, development: development)
        if let alg = body.requestSigningAlg, !signingAlgorithms.contains(alg) {
            throw ServiceError.notValid("'backchannel_authentication_request_signing_alg' must be ES256 or PS256.")
        }
        let types = Array(Set(body.authorizationDetailsTypes ?? [])).sorted()
        if let unknown = types.first(where: { !knownDetailTypes.contains($0) }) {
            throw ServiceError.notValid(
                "'\(unknown.prefix(64))' is no authorization_details type this server knows (\(knownDetailTypes.sorted().joined(separator: ", "))).")
        }
        return BackendClientRecord(
            clientID: clientID, jwks: JSONEncoder.wire.text(jwks), tokenDeliveryMode: mode.rawValue, notificationEndpoint: endpoint,
            requestSigningAlg: body.requestSigningAlg, authorizationDetailsTypes: JSONEncoder.wire.text(.array(types.map { .string($0) })))
    }

    /// Refuses fields only a backend client takes on a web or native client, where they would be ignored.
    static func refuseBackendFields(in body: CreateClientRequest) throws {
        let given = [
            ("jwks", body.jwks != nil), ("backchannel_token_delivery_mode", body.tokenDeliveryMode != nil),
            ("backchannel_client_notification_endpoint", body.notificationEndpoint != nil),
            ("backchannel_authentication_request_signing_alg", body.requestSigningAlg != nil),
            ("authorization_details_types", body.authorizationDetailsTypes != nil),
        ]
        if let (field, _) = given.first(where: { $0.1 }) {
            throw ServiceError.notValid("'\(field)' is for a backend client only.")
        }
    }

    /// Public keys only, each EC P-256 or RSA of at least 2048 bits, each with its own `kid`, each one
    /// JWTKit can verify with.
    private static func checkKeySet(_ jwks: JSONValue) async throws {
        guard let keys = jwks.objectValue?["keys"]?.arrayValue, !keys.isEmpty, keys.count <= mostKeys else {
            throw ServiceError.notValid("'jwks' must be a JSON Web Key Set: {\"keys\": [...]} with 1 to \(mostKeys) keys.")
        }
        var kids = Set<String>()
        for key in keys {
            guard let fields = key.objectValue, let kid = fields["kid"]?.stringValue, (1...128).contains(kid.count) else {
                throw ServiceError.notValid("Each key of 'jwks' needs a 'kid' of 1 to 128 characters.")
            }
            guard kids.insert(kid).inserted else { throw ServiceError.notValid("Two keys of 'jwks' have the kid '\(kid.prefix(128))'.") }
            let name = "the key '\(kid.prefix(128))' of 'jwks'"
            // A private key sent here would be stored and shown again; it must never leave the client.
            if let member = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"].first(where: { fields[$0] != nil }) {
                throw ServiceError.notValid("\(name) holds private key material ('\(member)'): register the public key only.")
            }
            if let use = fields["use"], use != "sig" { throw ServiceError.notValid("\(name) must be for signatures ('use': 'sig').") }
            let algorithm: String
            switch fields["kty"]?.stringValue {
            case "EC":
                guard fields["crv"]?.stringValue == "P-256" else { throw ServiceError.notValid("\(name) must be on the curve P-256.") }
                algorithm = "ES256"
            case "RSA":
                let encoded: String? = fields["n"]?.stringValue
                let modulus: [UInt8] = encoded.flatMap { LenientBase64.decode($0) }.map { Array($0.drop { $0 == 0 }) } ?? []
                let bits = modulus.first.map { modulus.count * 8 - $0.leadingZeroBitCount } ?? 0
                guard bits >= shortestRSAModulus else {
                    throw ServiceError.notValid("\(name) must be an RSA key of at least \(shortestRSAModulus) bits.")
                }
                algorithm = "PS256"
            default:
                throw ServiceError.notValid("\(name) must be an EC (P-256) or RSA key.")
            }
            if let alg = fields["alg"], alg.stringValue != algorithm {
                throw ServiceError.notValid("\(name) may only be used with \(algorithm).")
            }
            do {
                let jwk = try JSONDecoder().decode(JWK.self, from: try JSONEncoder().encode(key))
                _ = try await JWTKeyCollection().add(jwk: jwk).getKey(for: JWKIdentifier(string: kid), alg: algorithm)
            } catch {
                throw ServiceError.notValid("\(name) is not a valid public key.")
            }
        }
    }

    /// Ping mode's endpoint: https, or in development http to the loopback. Poll mode takes none.
    private static func notificationEndpoint(_ text: String?, mode: TokenDeliveryMode, development: Bool) throws -> String? {
        switch mode {
        case .poll:
            if text != nil { throw ServiceError.notValid("A poll client takes no 'backchannel_client_notification_endpoint'.") }
            return nil
        case .ping:
            guard let text else { throw ServiceError.notValid("A ping client needs 'backchannel_client_notification_endpoint'.") }
            guard text.count <= 2048, let url = URLComponents(string: text), let host = url.host, !host.isEmpty,
                url.user == nil, url.password == nil, url.fragment == nil
            else {
                throw ServiceError.notValid("'backchannel_client_notification_endpoint' must be an absolute URL without credentials or fragment.")
            }
            let loopback = ["127.0.0.1", "localhost", "[::1]", "::1"].contains(host.lowercased())
            guard url.scheme == "https" || (url.scheme == "http" && development && loopback) else {
                throw ServiceError.notValid(
                    "'backchannel_client_notification_endpoint' must be https (http only to the loopback, in development mode).")
            }
            return text
        }
    }
}
