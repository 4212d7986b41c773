import CountersignCore
import CountersignServer
import Crypto
import Foundation
import Testing

@Suite("The server's seal over evidence: its records checkable offline")
struct EvidenceSealTests {
    @Test("each bundle handed out is sealed with the evidence key: the seal checks with it, and shows a record changed after export, a seal moved from another bundle, a key not the server's and a token passed off as a seal; a token key never checks a seal")
    func sealedBundles() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            var bundles: [EvidenceBundle] = []
            for amount in ["25.00", "30.00"] {
                let step = try await phone.startSigning("txn_branches", as: "ada@example.com", approvalData: nil, params: ["amount": .string(amount)])
                let echo = try await phone.client.submitClientResponse(.clientInput, data: try await phone.signShown(step, as: "ada@example.com"))
                bundles.append(try await server.evidence(try #require(echo.data?["signed"]?["evidence_id"]?.stringValue)))
            }
            let keys = try await Self.evidenceKeys(server)

            let seal = try await EvidenceSeal.check(bundles[0], keys: keys)
            #expect(seal.iss == TestServer.issuer)
            #expect(seal.evidence == bundles[0].unsealed)

            // The user named in the bundle changed after export.
            let renamed = try JSONDecoder().decode(EvidenceBundle.self, from: Data(
                String(decoding: try JSONEncoder().encode(bundles[0]), as: UTF8.self)
                    .replacingOccurrences(of: "\"ada@example.com\"", with: "\"eve@example.com\"").utf8))
            await #expect(throws: EvidenceSeal.Problem.recordsChanged) { try await EvidenceSeal.check(renamed, keys: keys) }
            // The first bundle's seal put on the second.
            var moved = bundles[1]
            moved.seal = bundles[0].seal
            await #expect(throws: EvidenceSeal.Problem.recordsChanged) { try await EvidenceSeal.check(moved, keys: keys) }
            // A bundle without a seal, and a key that is not the server's (another point under the same kid).
            await #expect(throws: EvidenceSeal.Problem.missing) { try await EvidenceSeal.check(bundles[0].unsealed, keys: keys) }
            let kid = try #require(try await server.admin(.GET, "evidence-keys").body["keys"]?.arrayValue?.first?["kid"]?.stringValue)
            await Self.expectDoesNotVerify { try await EvidenceSeal.check(bundles[0], keys: Self.otherKey(kid: kid)) }
            // An access token is no seal, even one the server signed.
            var tokenAsSeal = bundles[0]
            tokenAsSeal.seal = try #require(try await phone.login(as: "ada@example.com").token)
            await #expect(throws: EvidenceSeal.Problem.notASeal) { try await EvidenceSeal.check(tokenAsSeal, keys: keys) }

            // The seal's key is not a token key: the published JWKS does not check a seal, so no relying
            // party takes one for a token; and rotating the token keys leaves the seals checkable.
            let published = try await Self.published(server)
            await Self.expectDoesNotVerify { try await EvidenceSeal.check(bundles[0], keys: published) }
            let keysBefore = try await server.admin(.GET, "evidence-keys").body
            #expect(try await server.admin(.POST, "signing-keys/rotate").status == .created)
            #expect(try await server.admin(.GET, "evidence-keys").body == keysBefore)
            let resealed = try await server.evidence(bundles[0].id)
            #expect(try await EvidenceSeal.check(resealed, keys: keys).evidence == bundles[0].unsealed)
        }
    }

    @Test("instances sharing a master key seal with the same evidence key, stored nowhere; another master key makes another")
    func evidenceKeyFollowsTheMasterKey() async throws {
        let database = try await TestDatabase.make()
        let masterKey = TestServer.randomMasterKey()
        var seen: [JSONValue] = []
        for key in [masterKey, masterKey] {
            try await TestServer.run(on: database, clock: TestClock(), masterKey: key) { server in
                seen.append(try await server.admin(.GET, "evidence-keys").body)
            }
        }
        try await database.drop()
        let other = try await TestDatabase.make()
        try await TestServer.run(on: other, clock: TestClock(), masterKey: TestServer.randomMasterKey()) { server in
            seen.append(try await server.admin(.GET, "evidence-keys").body)
        }
        try await other.drop()
        #expect(seen[0] == seen[1])
        #expect(seen[0] != seen[2])
        #expect(seen[0]["keys"]?.arrayValue?.count == 1)
    }

    @Test("the evidence key needs the admin key")
    func evidenceKeyNeedsTheAdminKey() async throws {
        try await TestServer.run { server in
            let status = try await server.send(.GET, "/admin/v1/evidence-keys").status
            #expect(status == .unauthorized)
        }
    }

    /// `GET /admin/v1/evidence-keys`, as text.
    private static func evidenceKeys(_ server: TestServer) async throws -> String {
        let (status, body) = try await server.admin(.GET, "evidence-keys")
        #expect(status == .ok)
        return String(decoding: try JSONEncoder().encode(body), as: UTF8.self)
    }

    /// `GET /.well-known/jwks.json`, as text.
    private static func published(_ server: TestServer) async throws -> String {
        String(decoding: try JSONEncoder().encode(try await server.send(.GET, "/.well-known/jwks.json").body), as: UTF8.self)
    }

    /// Expects `check` to refuse the seal as not verifying with the keys (not for keys it cannot read).
    private static func expectDoesNotVerify(_ check: () async throws -> EvidenceSeal, sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            _ = try await check()
            Issue.record("the seal verified", sourceLocation: sourceLocation)
        } catch {
            guard case .doesNotVerify = error as? EvidenceSeal.Problem else {
                Issue.record("refused for another reason: \(error)", sourceLocation: sourceLocation)
                return
            }
        }
    }

    /// A JWKS of a new P-256 key under `kid`.
    private static func otherKey(kid: String) -> String {
        let point = P256.Signing.PrivateKey().publicKey.x963Representation
        let (x, y) = (LenientBase64.urlEncoded(point[1..<33]), LenientBase64.urlEncoded(point[33..<65]))
        return #"{"keys":[{"kty":"EC","crv":"P-256","alg":"ES256","use":"sig","kid":"\#(kid)","x":"\#(x)","y":"\#(y)"}]}"#
    }
}
