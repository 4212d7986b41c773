import CountersignClient
import CountersignCore
import Foundation
import Testing

@Suite("Applications do not share users unless the admin links them")
struct ApplicationUsersTests {
    /// A development server with the demo application and a second one, `shop`, with clients `shop-web`
    /// and `shop-app`; Ada's phone is registered through the demo's native client.
    static func twoApplications(_ body: (TestServer, RegisteredPhone, String) async throws -> Void) async throws {
        try await TestServer.runWithFixtures { server in
            #expect(try await server.admin(.POST, "applications", json: ["id": "shop", "name": "Shop"]).status == .created)
            for (id, kind) in [("shop-web", "web"), ("shop-app", "native")] {
                let created = try await server.admin(.POST, "applications/shop/clients", json: ["id": .string(id), "name": "C", "kind": .string(kind)])
                #expect(created.status == .created)
            }
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let users = try #require(try await server.admin(.GET, "users").body.arrayValue)
            let adaID = try #require(users.first?["id"]?.stringValue)
            try await body(server, phone, adaID)
        }
    }

    @Test("a user enrolled through one application gets no push and no token through another's client; linked by the admin, they do; unlinked, not again")
    func signInThroughAnotherApplication() async throws {
        try await Self.twoApplications { server, phone, adaID in
            let shop = TestBrowser(client: server.client("shop-web"))
            // The attack: the shop's public client id and Ada's email.
            // Answered as for an email with no phone: a wait on a decoy, no push.
            let refused = try await shop.signIn(email: "ada@example.com")
            #expect(refused.journeyStepID == JourneyStepID.mobileApproveAuthentication && refused.token == nil)
            #expect(try await phone.inbox().isEmpty)
            #expect(try await server.count("approvals") == 0)

            #expect(try await server.admin(.PUT, "users/\(adaID)/applications/shop").status == .noContent)
            #expect(try await server.admin(.GET, "users/\(adaID)").body["applications"] == ["demo", "shop"])
            // The attack's request counts toward Ada's push-fatigue limits like any other: the backoff first.
            server.clock.advance(by: 11)
            let waiting = try await shop.signIn(email: "ada@example.com")
            #expect(waiting.journeyStepID == JourneyStepID.mobileApproveAuthentication)
            _ = try await phone.approve()
            let claims = try await server.verifiedClaims(try #require(try await shop.poll().token))
            #expect(claims.aud == "shop-web" && claims.externalUserID == "ada@example.com")

            #expect(try await server.admin(.DELETE, "users/\(adaID)/applications/shop").status == .noContent)
            #expect(try await server.admin(.DELETE, "users/\(adaID)/applications/shop").status == .notFound)
            #expect(try await server.admin(.GET, "users/\(adaID)").body["applications"] == ["demo"])
            server.clock.advance(by: 11)
            let again = try await shop.signIn(email: "ada@example.com")
            #expect(again.journeyStepID == JourneyStepID.mobileApproveAuthentication && again.token == nil)
            #expect(try await server.count("approvals") == 1)
            #expect(try await phone.inbox().isEmpty)

            let events = try await server.admin(.GET, "security-events?kind=user_applications_changed").body["security_events"]?.arrayValue ?? []
            #expect(events.filter { $0["user_id"] == .string(adaID) }.count == 2)
        }
    }

    @Test("registering through another application's client while naming an existing user is refused, and adds nothing")
    func registrationNamingAnotherApplicationsUser() async throws {
        try await Self.twoApplications { server, _, adaID in
            let attacker = TestPhone(client: server.client("shop-app"))
            var step = try await attacker.client.startJourney("mobile_registration_by_email")
            step = try await attacker.client.submitClientResponse(.clientInput, data: ["email": "ada@example.com"])
            #expect(step.journeyStepID == JourneyStepID.rejection)
            #expect(step.error?.code == ErrorCode.enrollmentRequired)
            #expect(try await server.count("users") == 1)
            #expect(try await server.count("devices") == 1)
            #expect(try await server.admin(.GET, "users/\(adaID)").body["applications"] == ["demo"])
        }
    }

    @Test("an enrollment code redeemed through another application's client makes the user a member of it")
    func enrollmentCodeJoinsTheApplication() async throws {
        try await Self.twoApplications { server, _, adaID in
            let issued = try await server.admin(.POST, "enrollment-codes", json: ["external_user_id": "ada@example.com", "client_id": "shop-app"])
            let code = try #require(issued.body["code"]?.stringValue)
            let phone = TestPhone(client: server.client("shop-app"))
            _ = try await phone.client.startJourney("mobile_registration")
            let step = try await phone.client.submitClientResponse(.clientInput, data: ["enrollment_code": .string(code)])
            #expect(step.journeyStepID == JourneyStepID.mobileBiometricsRegistration)
            #expect(try await server.admin(.GET, "users/\(adaID)").body["applications"] == ["demo", "shop"])
            #expect(try await server.count("users") == 1)
        }
    }

    @Test("linking needs an existing user and application, and the admin key")
    func linkRefusals() async throws {
        try await Self.twoApplications { server, _, adaID in
            #expect(try await server.admin(.PUT, "users/usr_nobody/applications/shop").status == .notFound)
            #expect(try await server.admin(.PUT, "users/\(adaID)/applications/nowhere").status == .notFound)
            let stranger = try await server.send(.PUT, "/admin/v1/users/\(adaID)/applications/shop", bearer: "not-the-admin-key")
            #expect(stranger.status == .unauthorized)
            #expect(try await server.admin(.GET, "users/\(adaID)").body["applications"] == ["demo"])
        }
    }
}
