import CountersignCore
import CountersignServer
import Crypto
import Foundation
import JWTKit
import Testing

@Suite("Tokens, JWKS and discovery")
struct TokenTests {
    /// What another instance's rotation leaves in the shared database, now: the key retired, and a new one
    /// sealed with the shared master key, bound to its kid. Returns the new kid.
    func rotateAsAnotherInstance(_ server: TestServer, masterKey: Data) async throws -> String {
        let newKid = "key_other_instance"
        let sealed = try AES.GCM.seal(
            Data(ES256PrivateKey().pemRepresentation.utf8), using: SymmetricKey(data: masterKey), authenticating: Data(newKid.utf8))
        let sealedPEM = try #require(sealed.combined).base64EncodedString()
        let sql = server.sql
        let now = server.clock.now()
        try await sql.raw("UPDATE signing_keys SET retired_at = \(bind: now) WHERE retired_at IS NULL").run()
        try await sql.raw("""
            INSERT INTO signing_keys (id, private_key_pem, created_at, activates_at)
            VALUES (\(bind: newKid), \(bind: sealedPEM), \(bind: now), \(bind: now))
            """).run()
        return newKid
    }

    func kid(of token: String) throws -> String? {
        let header = try #require(token.split(separator: ".").first)
        let json = try JSONDecoder().decode(JSONValue.self, from: try #require(LenientBase64.decode(String(header))))
        #expect(json["alg"] == "ES256")
        return json["kid"]?.stringValue
    }

    @Test("discovery names the issuer, the JWKS and every field OpenID libraries require; each key says its use and algorithm")
    func discovery() async throws {
        try await TestServer.run { server in
            let document = try await server.send(.GET, "/.well-known/openid-configuration").body
            #expect(document["issuer"] == .string(TestServer.issuer))
            #expect(document["jwks_uri"] == .string(TestServer.issuer + "/.well-known/jwks.json"))
            #expect(document["id_token_signing_alg_values_supported"] == ["ES256"])
            #expect(document["response_types_supported"] == ["id_token"])
            #expect(document["grant_types_supported"] == ["implicit", "urn:openid:params:grant-type:ciba"])
            #expect(document["token_endpoint"] == .string(TestServer.issuer + "/oauth2/token"))
            #expect(document["backchannel_authentication_endpoint"] == .string(TestServer.issuer + "/oauth2/bc-authorize"))
            #expect(document["subject_types_supported"] == ["public"])
            #expect(document["claims_supported"]?.arrayValue?.contains("sub") == true)
            let key = try #require(try await server.send(.GET, "/.well-known/jwks.json").body["keys"]?.arrayValue?.first)
            #expect(key["use"] == "sig")
            #expect(key["alg"] == "ES256")
            #expect(key["kty"] == "EC")
            #expect(key["crv"] == "P-256")
        }
    }

    @Test("the signing key survives a restart (it is persisted)")
    func keyIsPersisted() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("db.sqlite").path
        var first: JSONValue = .null
        let masterKey = TestServer.randomMasterKey()
        let sameDatabaseAndKey = { (configuration: inout Configuration) in
            configuration.database = .sqliteFile(path)
            configuration.masterKey = masterKey
        }
        try await TestServer.run(adjust: sameDatabaseAndKey) { server in
            first = try await server.send(.GET, "/.well-known/jwks.json").body
        }
        try await TestServer.run(adjust: sameDatabaseAndKey) { server in
            let second = try await server.send(.GET, "/.well-known/jwks.json").body
            #expect(second == first)
        }
        #expect(first["keys"]?.arrayValue?.count == 1)
    }

    @Test("a rotated-in key is published at once and signs only once every relying party's cached JWKS holds it; the old key stays published until its tokens expire")
    func rotation() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            let oldToken = try #require(try await phone.register(email: "ada@example.com").token)
            let oldKid = try kid(of: oldToken)
            // Served once before the rotation, so a JWKS kept in memory must be rebuilt by it.
            #expect(try await server.send(.GET, "/.well-known/jwks.json").body["keys"]?.arrayValue?.count == 1)

            let rotated = try await server.admin(.POST, "signing-keys/rotate")
            #expect(rotated.status == .created)
            let newKid = try #require(rotated.body["kid"]?.stringValue)
            #expect(newKid != oldKid)
            let published = try await server.send(.GET, "/.well-known/jwks.json")
            #expect(published.body["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue } == [newKid, oldKid].compactMap { $0 })
            #expect(published.headers.first(name: .cacheControl) == "public, max-age=300")

            // A relying party that cached the key set just before the rotation keeps it 300 s; every
            // instance reads the key set again within 30 s. Until then (a whole second) the old key signs.
            #expect(rotated.body["activates_at"]?.stringValue.flatMap { try? Date($0, strategy: .iso8601) }
                == Date(timeIntervalSince1970: (server.clock.now().timeIntervalSince1970 + 330).rounded(.up)))
            server.clock.advance(by: 329)
            #expect(try kid(of: try #require(try await phone.login(as: "ada@example.com").token)) == oldKid)
            server.clock.advance(by: 2)
            let newToken = try #require(try await phone.login(as: "ada@example.com").token)
            #expect(try kid(of: newToken) == newKid)
            _ = try await server.verifiedClaims(oldToken)
            _ = try await server.verifiedClaims(newToken)
            #expect(try await server.send(.GET, "/.well-known/jwks.json").body["keys"]?.arrayValue?.count == 2)

            // The old key stays a token's lifetime and one key set refresh after it stopped signing (another
            // instance may have signed with it until it read the key set again), then goes.
            server.clock.advance(by: 3628)
            #expect(try await server.send(.GET, "/.well-known/jwks.json").body["keys"]?.arrayValue?.count == 2)
            server.clock.advance(by: 2)
            let keys = try await server.send(.GET, "/.well-known/jwks.json").body["keys"]?.arrayValue
            #expect(keys?.count == 1)
            #expect(keys?.first?["kid"] == .string(newKid))
        }
    }

    @Test("a rotation `immediately` (a key thought compromised) signs with the new key at once")
    func immediateRotation() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            _ = try await phone.register(email: "ada@example.com")
            let rotated = try await server.admin(.POST, "signing-keys/rotate", json: ["immediately": true])
            #expect(rotated.status == .created)
            let newKid = try #require(rotated.body["kid"]?.stringValue)
            #expect(rotated.body["activates_at"]?.stringValue.flatMap { try? Date($0, strategy: .iso8601) }.map { server.clock.now().timeIntervalSince($0) }.map { (0..<1).contains($0) } == true)
            #expect(try kid(of: try #require(try await phone.login(as: "ada@example.com").token)) == newKid)
        }
    }

    @Test("a key another instance rotated in is published and signs here once the key set is read again, within 30 s")
    func rotationByAnotherInstance() async throws {
        let masterKey = Data((0..<MasterKeySource.keyLength).map { _ in UInt8.random(in: 0...255) })
        try await TestServer.run(adjust: { $0.masterKey = .key(masterKey) }) { server in
            let phone = TestPhone(client: server.client())
            let firstToken = try #require(try await phone.register(email: "ada@example.com").token)
            let oldKid = try #require(try kid(of: firstToken))
            #expect(try await server.send(.GET, "/.well-known/jwks.json").body["keys"]?.arrayValue?.count == 1)

            server.clock.advance(by: 1)
            let newKid = try await rotateAsAnotherInstance(server, masterKey: masterKey)

            server.clock.advance(by: 31)
            let kids = try await server.send(.GET, "/.well-known/jwks.json").body["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue }
            #expect(kids == [newKid, oldKid])
            let token = try #require(try await phone.login(as: "ada@example.com").token)
            #expect(try kid(of: token) == newKid)
            _ = try await server.verifiedClaims(token)

            server.clock.advance(by: 3601)
            let remaining = try await server.send(.GET, "/.well-known/jwks.json").body["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue }
            #expect(remaining == [newKid])
        }
    }

    @Test("a token this instance signed with its old key after another instance rotated, before it read the key set again, stays verifiable until it expires")
    func signedJustAfterRotationElsewhere() async throws {
        let masterKey = Data((0..<MasterKeySource.keyLength).map { _ in UInt8.random(in: 0...255) })
        try await TestServer.run(adjust: { $0.masterKey = .key(masterKey) }) { server in
            let phone = TestPhone(client: server.client())
            let firstToken = try #require(try await phone.register(email: "ada@example.com").token)
            let oldKid = try #require(try kid(of: firstToken))

            server.clock.advance(by: 1)
            let newKid = try await rotateAsAnotherInstance(server, masterKey: masterKey)

            // This instance has not read the key set again yet: it still signs with the old key.
            server.clock.advance(by: 25)
            let lateToken = try #require(try await phone.login(as: "ada@example.com").token)
            #expect(try kid(of: lateToken) == oldKid)
            let expiresAt = TimeInterval(try await server.verifiedClaims(lateToken).exp)

            // A second before that token expires, its key is still published, and it verifies.
            server.clock.advance(by: expiresAt - 1 - server.clock.now().timeIntervalSince1970)
            let kids = try await server.send(.GET, "/.well-known/jwks.json").body["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue }
            #expect(kids == [newKid, oldKid])
            _ = try await server.verifiedClaims(lateToken)
        }
    }

    @Test("a token with a tampered payload does not verify")
    func tamperedToken() async throws {
        try await TestServer.run { server in
            let token = try #require(try await TestPhone(client: server.client()).register(email: "ada@example.com").token)
            var parts = token.split(separator: ".").map(String.init)
            var claims = try JSONDecoder().decode(JSONValue.self, from: try #require(LenientBase64.decode(parts[1]))).objectValue!
            claims["sub"] = "usr_someone_else"
            parts[1] = LenientBase64.urlEncoded(try JSONEncoder().encode(JSONValue.object(claims)))
            await #expect(throws: JWTError.self) { _ = try await server.verifiedClaims(parts.joined(separator: ".")) }
        }
    }
}
