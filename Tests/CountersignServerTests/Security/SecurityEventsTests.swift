import CountersignCore
import Foundation
import Testing

@Suite("Security events: what an operator sees afterwards")
struct SecurityEventsTests {
    func events(_ server: TestServer, kind: String) async throws -> [JSONValue] {
        try await server.admin(.GET, "security-events?kind=\(kind)").body["security_events"]?.arrayValue ?? []
    }

    @Test("a wrong or missing admin key is recorded with where it went, never the key tried; a flood is stored once a minute")
    func adminAuthenticationFailures() async throws {
        try await TestServer.run { server in
            let tried = "guessed-admin-key-0123456789"
            for _ in 0..<10 { #expect(try await server.send(.GET, "/admin/v1/users", bearer: tried).status == .unauthorized) }
            for _ in 0..<40 { #expect(try await server.send(.GET, "/admin/v1/users", bearer: tried).status == .tooManyRequests) }
            server.clock.advance(by: 61)
            #expect(try await server.send(.GET, "/admin/v1/stats").status == .unauthorized)
            let details = try await events(server, kind: "admin_auth_failed").compactMap { $0["detail"]?.stringValue }
            #expect(details.count == 2)
            #expect(details.contains { $0.hasPrefix("GET /admin/v1/users with a wrong admin key") })
            #expect(details.contains { $0.hasPrefix("GET /admin/v1/stats with no admin key") })
            #expect(!details.joined().contains(tried))

            // A long path is recorded by its beginning only: a stranger cannot fill the table with paths.
            server.clock.advance(by: 61)
            let long = "/admin/v1/users/" + String(repeating: "x", count: 4000)
            #expect(try await server.send(.GET, long).status == .unauthorized)
            let recorded = try #require(try await events(server, kind: "admin_auth_failed").first?["detail"]?.stringValue)
            #expect(recorded.hasPrefix("GET " + long.prefix(128) + "… with no admin key"))
            #expect(recorded.count < 200)
        }
    }

    @Test("guessing the admin key: after 10 wrong keys in a minute a source is refused 429, the right key too, until its minute is over")
    func adminKeyGuessesThrottled() async throws {
        try await TestServer.run { server in
            server.clock.advance(by: 60 - server.clock.now().timeIntervalSince1970.truncatingRemainder(dividingBy: 60))
            for attempt in 1...10 {
                #expect(try await server.send(.GET, "/admin/v1/users", bearer: "guess-\(attempt)-abcdefghijklmnop").status == .unauthorized)
            }
            let throttled = try await server.send(.GET, "/admin/v1/users", bearer: "guess-11-abcdefghijklmnop")
            #expect(throttled.status == .tooManyRequests)
            #expect(throttled.body["error"]?["code"] == .string(ErrorCode.rateLimited))
            #expect(throttled.headers.first(name: "Retry-After") == "60")
            // A 429 must not tell the right key from a wrong one, or guessing would go on at full speed.
            #expect(try await server.send(.GET, "/admin/v1/users", bearer: TestServer.adminKey).status == .tooManyRequests)
            server.clock.advance(by: 60)
            #expect(try await server.send(.GET, "/admin/v1/users", bearer: TestServer.adminKey).status == .ok)
        }
    }

    @Test("refused admin requests from new IPv6 addresses of one /64 are stored once a minute, as from one source")
    func adminRefusalsByBlock() async throws {
        try await TestServer.runBehindBalancer(adjust: { _ in }) { server, port in
            for host in 1...5 {
                #expect(try await statusThroughBalancer(port: port, "GET", "/admin/v1/users", from: "2001:db8:1:2::\(host)") == 401)
            }
            #expect(try await statusThroughBalancer(port: port, "GET", "/admin/v1/users", from: "2001:db8:1:3::1") == 401)
            let details = try await events(server, kind: "admin_auth_failed").compactMap { $0["detail"]?.stringValue }
            #expect(details.count == 2, "one for each /64: \(details)")
        }
    }

    @Test("an admin change whose record cannot be stored is not made, a signing key rotation among them: no change without its security event")
    func noChangeWithoutItsRecord() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            // The record's table gone, so every event's insert fails.
            try await server.sql.raw("DROP TABLE security_events").run()

            #expect(try await server.admin(.POST, "applications", json: ["id": "shop", "name": "Shop"]).status == .internalServerError)
            let applications = try await server.admin(.GET, "applications").body.arrayValue ?? []
            #expect(!applications.contains { $0["id"] == "shop" })

            #expect(try await server.admin(.POST, "devices/\(phone.deviceID)/revoke").status == .internalServerError)
            let userID = try #require(try await server.admin(.GET, "users").body.arrayValue?.first?["id"]?.stringValue)
            #expect(try await server.admin(.GET, "users/\(userID)/devices").body.arrayValue?.first?["status"] == "active")

            // A rotation is neither stored nor used: the old key stays the one that signs and is published.
            let keysBefore = try await server.admin(.GET, "signing-keys").body
            #expect(try await server.admin(.POST, "signing-keys/rotate").status == .internalServerError)
            #expect(try await server.admin(.GET, "signing-keys").body == keysBefore)
            let activeKID = try #require(keysBefore.arrayValue?.first { $0["retired_at"]?.stringValue == nil }?["kid"]?.stringValue)
            let published = try await server.send(.GET, "/.well-known/jwks.json").body["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue }
            #expect(published == [activeKID])
        }
    }

    @Test("a web code typed wrong until no try is left is recorded with the user, approval and device")
    func exhaustedCode() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let waiting = try await TestBrowser(server).signIn("web_login", email: "ada@example.com")
            let otp = try #require(waiting.data?["otp"]?.stringValue)
            let wrong = otp == "000000" ? "111111" : "000000"
            _ = try await phone.startApproval()
            for _ in 0..<3 { _ = try await phone.phone.client.submitClientResponse(.clientInput, data: ["passcode": .string(wrong)]) }
            let recorded = try await events(server, kind: "otp_exhausted")
            #expect(recorded.count == 1)
            #expect(recorded.first?["device_id"] == .string(phone.deviceID))
            #expect(recorded.first?["user_id"]?.stringValue?.hasPrefix("usr_") == true)
        }
    }

    @Test("creating applications and clients, and revoking a device or a biometric key, are recorded; revoking again records nothing more")
    func applicationsAndRevocations() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            #expect(try await server.admin(.POST, "applications", json: ["id": "shop", "name": "Shop"]).status == .created)
            #expect(try await server.admin(.POST, "applications/shop/clients", json: ["id": "shop-web", "name": "W", "kind": "web"]).status == .created)
            let created = try await events(server, kind: "application_changed").compactMap { $0["detail"]?.stringValue }
            #expect(Set(created) == ["web client shop-web was created in application shop", "application shop was created"])

            let users = try #require(try await server.admin(.GET, "users").body.arrayValue)
            let userID = try #require(users.first { $0["external_user_id"] == .string(phone.email) }?["id"]?.stringValue)
            let keys = try await server.admin(.GET, "users/\(userID)/biometric-keys").body
            let keyID = try #require(keys.arrayValue?.first?["id"]?.stringValue)
            #expect(try await server.admin(.POST, "biometric-keys/\(keyID)/revoke").status == .ok)
            server.clock.advance(by: 1)
            #expect(try await server.admin(.POST, "devices/\(phone.deviceID)/revoke").status == .ok)
            let revoked = try await events(server, kind: "credential_revoked")
            #expect(revoked.count == 2)
            #expect(revoked.first?["device_id"] == .string(phone.deviceID), "newest first: the device")
            #expect(revoked.allSatisfy { $0["user_id"] == .string(userID) })
            let again = try await server.admin(.POST, "devices/\(phone.deviceID)/revoke")
            #expect(again.status == .ok && again.body["status"] == "revoked")
            #expect(try await server.admin(.POST, "biometric-keys/\(keyID)/revoke").status == .ok)
            #expect(try await events(server, kind: "credential_revoked").count == 2, "a second revocation changed nothing")
        }
    }

    @Test("an enrollment code issued through the admin API is recorded (for whom, through which client), never the code, and its answer is kept by no cache")
    func enrollmentCodeIssued() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let issued = try await server.send(
                .POST, "/admin/v1/enrollment-codes", json: ["external_user_id": "ada@example.com", "client_id": "demo-native"],
                bearer: TestServer.adminKey)
            #expect(issued.status == .created)
            #expect(issued.headers.first(name: .cacheControl) == "no-store")
            let code = try #require(issued.body["code"]?.stringValue)
            let recorded = try await events(server, kind: "enrollment_code_issued")
            #expect(recorded.count == 1)
            let detail = try #require(recorded.first?["detail"]?.stringValue)
            #expect(detail.contains("'ada@example.com'") && detail.contains("client 'demo-native'"), "\(detail)")
            #expect(!detail.contains(code) && !detail.contains(code.replacingOccurrences(of: "-", with: "")))
            let users = try #require(try await server.admin(.GET, "users").body.arrayValue)
            #expect(recorded.first?["user_id"] == users.first { $0["external_user_id"] == .string(phone.email) }?["id"])
        }
    }

    @Test("rotating the signing key and changing push configurations are recorded")
    func adminChanges() async throws {
        try await FakePushProviders.run { providers in
            try await TestServer.run { server in
                #expect(try await server.admin(.POST, "signing-keys/rotate").status == .created)
                let created = try await server.admin(.POST, "push-configs", json: providers.apnsConfig)
                let id = try #require(created.body["id"]?.stringValue)
                _ = try await server.admin(.PATCH, "push-configs/\(id)", json: ["environment": "production"])
                _ = try await server.admin(.DELETE, "push-configs/\(id)")
                #expect(try await events(server, kind: "signing_key_rotated").count == 1)
                let changes = try await events(server, kind: "push_config_changed").compactMap { $0["detail"]?.stringValue }
                #expect(Set(changes) == ["push configuration \(id) created", "push configuration \(id) changed", "push configuration \(id) deleted"])
            }
        }
    }
}
