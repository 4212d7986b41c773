import CountersignServer
import Foundation
import JWTKit
import Testing

extension TestServer {
    /// Verifies `token` against the JWKS the server publishes, as a relying party would.
    func verifiedClaims(_ token: String) async throws -> TokenClaims {
        let response = try await request(.GET, "/.well-known/jwks.json")
        #expect(response.status == .ok)
        let keys = JWTKeyCollection()
        try await keys.add(jwks: JSONDecoder().decode(JWKS.self, from: response.body))
        return try await keys.verify(token, as: TokenClaims.self)
    }
}
