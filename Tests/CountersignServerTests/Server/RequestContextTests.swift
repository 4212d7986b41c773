import CountersignClient
import CountersignCore
import Foundation
import Testing

@Suite("Context on the phone: a person can tell their own request")
struct RequestContextTests {
    @Test("every step of the phone's journey shows the application, browser, OS and time of the web request; the push payload does not", arguments: [
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.70",
         "Edge 131", "Windows"),
        ("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "Firefox 128", "Linux"),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1",
         "Safari 17", "iOS"),
        ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
         "Chrome 131", "Android"),
    ])
    func contextOnThePhone(userAgent: String, browser: String, os: String) async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let started = try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web"], userAgent: userAgent)
            let id = try #require(started.body["interaction_id"]?.stringValue)
            let waiting = try await server.send(
                .POST, "/v1/interactions/\(id)/submit", json: ["option": "client_input", "data": ["email": "ada@example.com"]],
                bearer: started.body["interaction_token"]?.stringValue, userAgent: userAgent)
            let otp = try #require(waiting.body["data"]?["otp"]?.stringValue)

            let payload = try #require(try await phone.inbox().first)
            #expect(Set(payload.keys) == ["approval_id", "client_id", "expires_at", "application"], "no context in the push")
            let typeCode = try await phone.startApproval()
            let context = try #require(typeCode.data?["request_context"])
            #expect(context["application"] == "Countersign Demo")
            #expect(context["browser"] == .string(browser))
            #expect(context["os"] == .string(os))
            #expect(context["requested_at"]?.stringValue == server.clock.now().formatted(.iso8601))
            let biometrics = try await phone.phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(otp)])
            #expect(biometrics.journeyStepID == JourneyStepID.mobileBiometricsAuthentication)
            #expect(biometrics.data?["request_context"] == context)
        }
    }
}
