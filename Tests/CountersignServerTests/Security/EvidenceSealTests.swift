import CountersignCore
@testable import CountersignServer
import Crypto
import Foundation
import Testing

@Suite("The server's seal over evidence: its records checkable offline")
struct EvidenceSealTests {
    @Test("each bundle handed out is sealed with the evidence key: the seal checks with it, and shows a record changed in a copy, a seal moved from another bundle, a key not the server's and a token passed off as a seal; a token key never checks a seal")
    func sealedBundles() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            var bundles: [EvidenceBundle] = []
            for amount in ["25.00", "30.00"] { bundles.append(try await server.evidence(try await Self.sign(amount, on: phone))) }
            let keys = try await Self.evidenceKeys(server)

            let seal = try await EvidenceSeal.check(bundles[0], keys: keys)
            #expect(seal.iss == TestServer.issuer)
            #expect(seal.evidence == bundles[0].unsealed)

            // The user named in a copy of the bundle changed.
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
            let token: String = try #require(try await phone.login(as: "ada@example.com").token)
            tokenAsSeal.seal = token
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

    @Test("the seal is made as the signature is recorded: a record changed in the database afterwards no longer matches it when handed out, and its time is the signing's, not the export's")
    func sealedAtSigning() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            var ids: [String] = []
            for amount in ["25.00", "30.00", "35.00"] { ids.append(try await Self.sign(amount, on: phone)) }
            let signedAt = server.clock.now()
            server.clock.advance(by: 86_400)
            let sql = server.sql
            // Someone with the database's write access changes what was signed, and whom the evidence names.
            try await sql.raw("""
                UPDATE transaction_evidence SET approval_data = replace(approval_data, '25.00', '2500.00') WHERE id = \(bind: ids[0])
                """).run()
            try await sql.raw("UPDATE transaction_evidence SET external_user_id = 'eve@example.com' WHERE id = \(bind: ids[1])").run()
            let keys = try await Self.evidenceKeys(server)
            let (amountChanged, userChanged) = (try await server.evidence(ids[0]), try await server.evidence(ids[1]))
            #expect(amountChanged.approvalData.canonicalJSON.contains("2500.00"))
            #expect(userChanged.externalUserID == "eve@example.com")
            for changed in [amountChanged, userChanged] {
                await #expect(throws: EvidenceSeal.Problem.recordsChanged) { try await EvidenceSeal.check(changed, keys: keys) }
            }
            let untouched = try await EvidenceSeal.check(try await server.evidence(ids[2]), keys: keys)
            #expect(abs(untouched.sealedAt.timeIntervalSince(signedAt)) < 2, "sealed at the signing, a day before the export")
        }
    }

    @Test("evidence whose seal was blanked in the database is handed out as it is stored, and fails the seal check rather than being sealed anew")
    func evidenceWithoutStoredSeal() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let id = try await Self.sign("25.00", on: phone)
            let sql = server.sql
            // Someone with the database's write access changes what was signed and drops the seal that shows it.
            try await sql.raw("""
                UPDATE transaction_evidence SET approval_data = replace(approval_data, '25.00', '2500.00'), seal = '' WHERE id = \(bind: id)
                """).run()
            let bundle = try await server.evidence(id)
            #expect(bundle.seal == "")
            await #expect(throws: (any Error).self) { try await EvidenceSeal.check(bundle, keys: try await Self.evidenceKeys(server)) }
            let listed = try #require(try await server.admin(.GET, "evidence").body["evidence"]?.arrayValue?.first)
            #expect(listed["seal"] == "")
        }
    }

    @Test("a signature made in the last microseconds of a second is sealed as it is stored: its evidence checks")
    func signedAtTheEndOfASecond() async throws {
        try await TestServer.runWithFixtures { server in
            let phone = TestPhone(client: server.client())
            try await phone.register(email: "ada@example.com")
            let now = server.clock.now().timeIntervalSince1970
            server.clock.advance(by: now.rounded(.down) + 1.9999997 - now)
            let id = try await Self.sign("25.00", on: phone)
            _ = try await EvidenceSeal.check(try await server.evidence(id), keys: try await Self.evidenceKeys(server))
        }
    }

    /// Signs a payment of `amount` on `phone` (fixture `txn_branches`); returns its evidence id.
    private static func sign(_ amount: String, on phone: TestPhone) async throws -> String {
        let step = try await phone.startSigning("txn_branches", as: "ada@example.com", approvalData: nil, params: ["amount": .string(amount)])
        let echo = try await phone.client.submitClientResponse(.clientInput, data: try await phone.signShown(step, as: "ada@example.com"))
        return try #require(echo.data?["signed"]?["evidence_id"]?.stringValue)
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
