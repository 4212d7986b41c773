import CountersignClient
import CountersignCore
import CountersignServer
import Foundation
import JWTKit
import NIOCore
import NIOHTTP1
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("The SDK against a server on a real port")
struct RealServerTests {
    @Test("register a phone, log in with biometrics, verify the token with the JWKS fetched over HTTP")
    func endToEnd() async throws {
        try await TestServer.run { server in try await server.listening { port in
            let baseURL = URL(string: "http://127.0.0.1:\(port)")!
            let phone = TestPhone(client: OrchestrationClient(baseURL: baseURL, clientID: "demo-native"))

            let registration = try await phone.register(email: "ada@example.com")
            #expect(registration.journeyStepID == JourneyStepID.success)
            let login = try await phone.login(as: "ada@example.com")
            #expect(login.journeyStepID == JourneyStepID.success)

            let (jwks, _) = try await URLSession.shared.data(from: baseURL.appendingPathComponent(".well-known/jwks.json"))
            let keys = JWTKeyCollection()
            try await keys.add(jwks: JSONDecoder().decode(JWKS.self, from: jwks))
            let claims = try await keys.verify(try #require(login.token), as: TokenClaims.self)
            #expect(claims.iss == TestServer.issuer)
            #expect(claims.aud == "demo-native")
            #expect(claims.amr == ["mobile_biometrics"])
            #expect(claims.exp > Int(Date().timeIntervalSince1970))
        } }
    }
}
