import CountersignCore
import CountersignServer
import Crypto
import Foundation
import Testing

@Suite("Backend clients (OpenID CIBA)")
struct BackendClientTests {
    /// An EC P-256 public key as a JWK.
    static func ecKey(kid: String) -> JSONValue {
        let raw = P256.Signing.PrivateKey().publicKey.x963Representation.dropFirst()
        return [
            "kty": "EC", "crv": "P-256", "kid": .string(kid),
            "x": .string(LenientBase64.urlEncoded(raw.prefix(32))), "y": .string(LenientBase64.urlEncoded(raw.suffix(32))),
        ]
    }

    /// A public RSA key of 2048 bits, and one of 1024.
    static let rsa2048Modulus = """
        pAzjy11a_wLdHGlbvE1nJUpFoPZlbDUWozeRqif7TnHdAgD4mUb2SMStLb2Qn9jfW2iBgGZZlvks51SJ7MveJ1BtDr4Y8r4tTGFJWKpMQaaoMBiTtFs_Y5EJYGf-FHJEB5xlob0gUiNLrXZBMTMKzpKerH48101Q4i96NMWSlKAm4hJJfD5UleDrDOljo9NBTb8glbzDgrpRkwHPALDidAbUPZmzIehPGwGFDplsvbXiHce2tjAxn3IlEeaBMMiGFTPtoQNqCmctmhgRdGIXAS70wGABKvYjOsZpbTlqoZMwMvakB6MYbcp_l-3CCFkLl_KVs05T7H5KaNDTebe6bw
        """
    static let rsa1024Modulus = """
        tJ5h7Fc2oTqcyUUwF1R914gjbc26ZGtt_UMzjvr-KTh_KO4idQ0QuHOsrZ1-o0xyMiRgMg7oxrl_i_iqXOvIZqddK3StI4CETAvtM5IXGpJxp5RDQWnGXV0tXttGXOILfz-43fiS9P-N_xkNpr3qMP9giR_kXcyNo6Li8p15pvs
        """

    static func rsaKey(kid: String, modulus: String = rsa2048Modulus) -> JSONValue {
        ["kty": "RSA", "kid": .string(kid), "n": .string(modulus), "e": "AQAB", "alg": "PS256"]
    }

    static func backend(_ id: String, keys: [JSONValue], with extra: [String: JSONValue] = ["backchannel_token_delivery_mode": "poll"]) -> JSONValue {
        var body: [String: JSONValue] = ["id": .string(id), "name": "Bank backend", "kind": "backend", "jwks": ["keys": .array(keys)]]
        body.merge(extra) { $1 }
        return .object(body)
    }

    @Test("a backend client registers its public keys, delivery mode and details types; it is listed with them and starts no journey")
    func registered() async throws {
        try await TestServer.run { server in
            #expect(try await server.admin(.POST, "applications", json: ["id": "bank", "name": "Bank"]).status == .created)
            let keys = [Self.ecKey(kid: "ec-1"), Self.rsaKey(kid: "rsa-1")]
            let created = try await server.admin(.POST, "applications/bank/clients", json: Self.backend("bank-backend", keys: keys, with: [
                "backchannel_token_delivery_mode": "ping",
                "backchannel_client_notification_endpoint": "https://bank.example/ciba/notify",
                "backchannel_authentication_request_signing_alg": "PS256",
                "authorization_details_types": ["payment_initiation", "payment_initiation"],
            ]))
            #expect(created.status == .created)
            let listed = try #require(try await server.admin(.GET, "applications/bank/clients").body.arrayValue?.first)
            #expect(listed["kind"] == "backend")
            #expect(listed["jwks"]?["keys"]?.arrayValue == keys)
            #expect(listed["backchannel_token_delivery_mode"] == "ping")
            #expect(listed["backchannel_client_notification_endpoint"] == "https://bank.example/ciba/notify")
            #expect(listed["backchannel_authentication_request_signing_alg"] == "PS256")
            #expect(listed["authorization_details_types"] == ["payment_initiation"])
            let applications = try await server.admin(.GET, "applications").body.arrayValue ?? []
            #expect(applications.first { $0["id"] == "bank" }?["clients"]?.arrayValue?.first?["jwks"] == listed["jwks"])

            let started = try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "bank-backend"])
            #expect(started.status == .forbidden)
            #expect(started.body["error"]?["code"] == .string(ErrorCode.journeyNotForClient))
        }
    }

    @Test("a registration that would weaken the client's authentication or its delivery is refused, naming why, and nothing is stored", arguments: [
        ("no keys", Self.backend("b", keys: []), "'jwks' must be a JSON Web Key Set"),
        ("a private key", Self.backend("b", keys: [Self.ecKey(kid: "k").merging(["d": "AAAA"])]), "holds private key material ('d')"),
        ("RSA of 1024 bits", Self.backend("b", keys: [Self.rsaKey(kid: "k", modulus: Self.rsa1024Modulus)]), "at least 2048 bits"),
        ("another curve", Self.backend("b", keys: [Self.ecKey(kid: "k").merging(["crv": "P-384"])]), "on the curve P-256"),
        ("a symmetric key", Self.backend("b", keys: [["kty": "oct", "kid": "k"]]), "must be an EC (P-256) or RSA key"),
        ("no kid", Self.backend("b", keys: [["kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"]]), "needs a 'kid'"),
        ("two keys of one kid", Self.backend("b", keys: [Self.ecKey(kid: "k"), Self.ecKey(kid: "k")]), "Two keys of 'jwks' have the kid 'k'"),
        ("a point off the curve", Self.backend("b", keys: [Self.ecKey(kid: "k").merging(["y": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"])]), "is not a valid public key"),
        ("an RSA key for RS256", Self.backend("b", keys: [Self.rsaKey(kid: "k").merging(["alg": "RS256"])]), "may only be used with PS256"),
        ("push mode", Self.backend("b", keys: [Self.ecKey(kid: "k")], with: ["backchannel_token_delivery_mode": "push"]), "must be poll or ping"),
        ("ping without an endpoint", Self.backend("b", keys: [Self.ecKey(kid: "k")], with: ["backchannel_token_delivery_mode": "ping"]), "needs 'backchannel_client_notification_endpoint'"),
        ("ping over http to another host", Self.backend("b", keys: [Self.ecKey(kid: "k")], with: [
            "backchannel_token_delivery_mode": "ping", "backchannel_client_notification_endpoint": "http://bank.example/notify",
        ]), "must be https"),
        ("an endpoint with credentials", Self.backend("b", keys: [Self.ecKey(kid: "k")], with: [
            "backchannel_token_delivery_mode": "ping", "backchannel_client_notification_endpoint": "https://user:pw@bank.example/notify",
        ]), "without credentials"),
        ("poll with an endpoint", Self.backend("b", keys: [Self.ecKey(kid: "k")], with: [
            "backchannel_token_delivery_mode": "poll", "backchannel_client_notification_endpoint": "https://bank.example/notify",
        ]), "A poll client takes no"),
        ("requests signed with HS256", Self.backend("b", keys: [Self.ecKey(kid: "k")], with: [
            "backchannel_token_delivery_mode": "poll", "backchannel_authentication_request_signing_alg": "HS256",
        ]), "must be ES256 or PS256"),
        ("an unknown details type", Self.backend("b", keys: [Self.ecKey(kid: "k")], with: [
            "backchannel_token_delivery_mode": "poll", "authorization_details_types": ["account_information"],
        ]), "no authorization_details type this server knows"),
        ("keys on a web client", ["id": "b", "name": "Web", "kind": "web", "jwks": ["keys": [Self.ecKey(kid: "k")]]], "'jwks' is for a backend client only"),
    ] as [(String, JSONValue, String)])
    func refused(name: String, body: JSONValue, reason: String) async throws {
        try await TestServer.run { server in
            #expect(try await server.admin(.POST, "applications", json: ["id": "bank", "name": "Bank"]).status == .created)
            let refused = try await server.admin(.POST, "applications/bank/clients", json: body)
            #expect(refused.status == .badRequest, "\(name)")
            #expect(refused.body["error"]?["message"]?.stringValue?.contains(reason) == true, "\(name): \(refused.body)")
            #expect(try await server.admin(.GET, "applications/bank/clients").body.arrayValue == [], "\(name)")
        }
    }

    @Test("a ping client may be notified over http on the loopback in development mode only")
    func loopbackInDevelopment() async throws {
        let body = Self.backend("bank-backend", keys: [Self.ecKey(kid: "k")], with: [
            "backchannel_token_delivery_mode": "ping", "backchannel_client_notification_endpoint": "http://127.0.0.1:9/notify",
        ])
        for production in [false, true] {
            try await TestServer.run(adjust: { if production { $0.mode = .production } }) { server in
                #expect(try await server.admin(.POST, "applications", json: ["id": "bank", "name": "Bank"]).status == .created)
                let created = try await server.admin(.POST, "applications/bank/clients", json: body)
                #expect(created.status == (production ? .badRequest : .created), "production: \(production)")
            }
        }
    }
}

extension JSONValue {
    /// This object with `fields` set.
    func merging(_ fields: [String: JSONValue]) -> JSONValue {
        .object((objectValue ?? [:]).merging(fields) { $1 })
    }
}
