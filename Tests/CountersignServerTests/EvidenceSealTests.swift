import CountersignCore
import CountersignServer
import Crypto
import Foundation
import Testing

@Suite("The server's seal over evidence: its records checkable offline")
struct EvidenceSealTests {
    @Test("each bundle handed out is sealed: the seal checks with the server's keys, also once they have rotated, and shows a record changed after export, a seal moved from another bundle, and a key not the server's")
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
            let keys = try await Self.everyKey(server)

            let seal = try await EvidenceSeal.check(bundles[0], keys: keys)
            #expect(seal.iss == TestServer.issuer)
            #expect(seal.evidence == bundles[0].unsealed)
            #expect(try await EvidenceSeal.check(bundles[1], keys: try await Self.published(server)).evidence == bundles[1].unsealed)

            // The user named in the bundle changed after export.
            let renamed = try JSONDecoder().decode(EvidenceBundle.self, from: Data(
                String(decoding: try JSONEncoder().encode(bundles[0]), as: UTF8.self)
                    .replacingOccurrences(of: "\"ada@example.com\"", with: "\"eve@example.com\"").utf8))
            await #expect(throws: EvidenceSeal.Problem.recordsChanged) { try await EvidenceSeal.check(renamed, keys: keys) }
            // The first bundle's seal put on the second.
            var moved = bundles[1]
            moved.seal = bundles[0].seal
            await #expect(throws: EvidenceSeal.Problem.recordsChanged) { try await EvidenceSeal.check(moved, keys: keys) }
            // A bundle without a seal, and keys that are not the server's (another point under the same kid).
            await #expect(throws: EvidenceSeal.Problem.missing) { try await EvidenceSeal.check(bundles[0].unsealed, keys: keys) }
            let kid = try #require(try await server.admin(.GET, "signing-keys").body.arrayValue?.first?["kid"]?.stringValue)
            await #expect {
                try await EvidenceSeal.check(bundles[0], keys: Self.otherKey(kid: kid))
            } throws: { error in
                if case .doesNotVerify = error as? EvidenceSeal.Problem { true } else { false }
            }

            // Rotated out, the key that sealed the first bundle still checks it.
            #expect(try await server.admin(.POST, "signing-keys/rotate").status == .created)
            #expect(try await EvidenceSeal.check(bundles[0], keys: try await Self.everyKey(server)).evidence == bundles[0].unsealed)
            let resealed = try await server.evidence(bundles[0].id)
            #expect(resealed.seal != bundles[0].seal)
            #expect(try await EvidenceSeal.check(resealed, keys: try await Self.everyKey(server)).evidence == bundles[0].unsealed)
        }
    }

    @Test("the list of every signing key's public key needs the admin key")
    func everyKeyNeedsTheAdminKey() async throws {
        try await TestServer.run { server in
            let status = try await server.send(.GET, "/admin/v1/signing-keys/jwks").status
            #expect(status == .unauthorized)
        }
    }

    /// `GET /admin/v1/signing-keys/jwks`, as text.
    private static func everyKey(_ server: TestServer) async throws -> String {
        let (status, body) = try await server.admin(.GET, "signing-keys/jwks")
        #expect(status == .ok)
        return String(decoding: try JSONEncoder().encode(body), as: UTF8.self)
    }

    /// `GET /.well-known/jwks.json`, as text.
    private static func published(_ server: TestServer) async throws -> String {
        String(decoding: try JSONEncoder().encode(try await server.send(.GET, "/.well-known/jwks.json").body), as: UTF8.self)
    }

    /// A JWKS of a new P-256 key under `kid`.
    private static func otherKey(kid: String) -> String {
        let point = P256.Signing.PrivateKey().publicKey.x963Representation
        let (x, y) = (LenientBase64.urlEncoded(point[1..<33]), LenientBase64.urlEncoded(point[33..<65]))
        return #"{"keys":[{"kty":"EC","crv":"P-256","alg":"ES256","use":"sig","kid":"\#(kid)","x":"\#(x)","y":"\#(y)"}]}"#
    }
}
