import CountersignClient
import CountersignCore
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// An operator of the console, enrolled and signed in as DESIGN.md §8 says: invited through the admin
/// API, their phone enrolled with the code, the web sign-in approved there with the code the page shows,
/// and its token traded for the session cookie.
struct SignedInOperator {
    let email: String
    let phone: RegisteredPhone
    let cookie: String
    let csrfToken: String
    let setCookie: String

    static func invite(_ server: TestServer, _ email: String, role: String) async throws -> RegisteredPhone {
        let invited = try await server.admin(.POST, "operators", json: ["email": .string(email), "role": .string(role)])
        #expect(invited.status == .created, "\(invited.body)")
        let code = try #require(invited.body["enrollment_code"]?.stringValue)
        let (phone, step) = try await SecureEnrollmentTests.redeem(code, on: server, client: "countersign-console-phone")
        let done = try await SecureEnrollmentTests.registerKeys(of: phone, from: step)
        #expect(done.journeyStepID == JourneyStepID.success)
        return RegisteredPhone(phone: phone, deviceID: try #require(done.data?["device_id"]?.stringValue), email: email)
    }

    /// The token `web_login` ends with through `clientID` once `phone` approved with the code shown.
    static func signInToken(_ server: TestServer, _ phone: RegisteredPhone, clientID: String = "countersign-console") async throws -> String {
        let browser = TestBrowser(client: server.client(clientID))
        let otp = try await browser.codeShown("web_login", email: phone.email)
        try await phone.approve(otp: otp, now: server.clock.now())
        let done = try await browser.poll()
        #expect(done.journeyStepID == JourneyStepID.success)
        return try #require(done.token)
    }

    static func signIn(_ server: TestServer, _ email: String, role: String = "admin") async throws -> SignedInOperator {
        let phone = try await invite(server, email, role: role)
        let token = try await signInToken(server, phone)
        let (status, body, headers) = try await server.send(.POST, "/console/session", json: ["token": .string(token)])
        #expect(status == .created, "\(body)")
        let setCookie = try #require(headers.first(name: "Set-Cookie"))
        let cookie = try #require(setCookie.split(separator: ";").first.map(String.init))
        return SignedInOperator(
            email: email, phone: phone, cookie: cookie, csrfToken: try #require(body["csrf_token"]?.stringValue), setCookie: setCookie)
    }

    /// An admin API request with the session cookie, and the CSRF token when `csrf`.
    func call(
        _ server: TestServer, _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, csrf: Bool = true
    ) async throws -> (status: HTTPStatus, body: JSONValue) {
        var headers: HTTPHeaders = ["Cookie": cookie]
        if csrf { headers.add(name: "X-CSRF-Token", value: csrfToken) }
        let (status, body, _) = try await server.send(method, path.hasPrefix("/") ? path : "/admin/v1/" + path, json: json, headers: headers)
        return (status, body)
    }
}

@Suite("The console's sessions: operators sign in with their phone; auditors read; changes need the CSRF token")
struct ConsoleSessionTests {
    static func events(_ server: TestServer, kind: String) async throws -> [JSONValue] {
        try #require(try await server.admin(.GET, "security-events?kind=\(kind)").body["security_events"]?.arrayValue)
    }

    @Test("an admin's session reads and, with the CSRF token, changes; the change names the operator; the cookie is HttpOnly and SameSite=Strict")
    func adminSession() async throws {
        try await TestServer.run { server in
            let admin = try await SignedInOperator.signIn(server, "ops@bank.example")
            #expect(admin.setCookie.hasPrefix("countersign_console="))
            for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] { #expect(admin.setCookie.contains(attribute), "\(attribute)") }
            #expect(!admin.setCookie.contains("Secure"), "the test server's public URL is http")

            let session = try await admin.call(server, .GET, "/console/session")
            #expect(session.body["operator"]?["email"] == "ops@bank.example" && session.body["operator"]?["role"] == "admin")
            #expect(try await admin.call(server, .GET, "applications").status == .ok)
            let created = try await admin.call(server, .POST, "applications", json: ["id": "shop", "name": "Shop"])
            #expect(created.status == .created, "\(created.body)")
            let recorded = try await Self.events(server, kind: "application_changed")
            #expect(recorded.first?["actor"] == "ops@bank.example")
            #expect(try await Self.events(server, kind: "console_signed_in").first?["actor"] == "ops@bank.example")
            server.clock.advance(by: 1)
            #expect(try await server.admin(.POST, "applications", json: ["id": "shop2", "name": "Shop"]).status == .created)
            #expect(try await Self.events(server, kind: "application_changed").first?["actor"] == "admin_key")

            let signOut = try await admin.call(server, .DELETE, "/console/session")
            #expect(signOut.status == .noContent)
            let after = try await admin.call(server, .GET, "applications")
            #expect(after.status == .unauthorized && after.body["error"]?["code"] == "session_ended")
        }
    }

    @Test("a change without the session's CSRF token is refused and recorded, and nothing changes")
    func csrfRequired() async throws {
        try await TestServer.run { server in
            let admin = try await SignedInOperator.signIn(server, "ops@bank.example")
            let refused = try await admin.call(server, .POST, "applications", json: ["id": "shop", "name": "Shop"], csrf: false)
            #expect(refused.status == .forbidden && refused.body["error"]?["code"] == "forbidden")
            var headers: HTTPHeaders = ["Cookie": admin.cookie, "X-CSRF-Token": String(admin.csrfToken.dropLast()) + "A"]
            headers.add(name: "Content-Type", value: "application/json")
            let forged = try await server.request(.POST, "/admin/v1/applications", headers: headers, body: ByteBuffer(string: #"{"id":"shop","name":"Shop"}"#))
            #expect(forged.status == .forbidden)
            let signOut = try await admin.call(server, .DELETE, "/console/session", csrf: false)
            #expect(signOut.status == .forbidden, "a stranger's page cannot sign the operator out")
            #expect(try await server.admin(.GET, "applications").body.arrayValue?.contains { $0["id"] == "shop" } == false)
            #expect(try await Self.events(server, kind: "console_refused").first?["detail"]?.stringValue?.contains("CSRF") == true)
        }
    }

    @Test("an auditor reads everything and every change is refused by the server")
    func auditorRefused() async throws {
        try await TestServer.run { server in
            let customer = try await RegisteredPhone.register(server, email: "ada@example.com")
            let auditor = try await SignedInOperator.signIn(server, "audit@bank.example", role: "auditor")
            for path in ["applications", "users", "journeys", "security-events", "stats", "operators", "approvals", "push-configs", "evidence"] {
                #expect(try await auditor.call(server, .GET, path).status == .ok, "\(path)")
            }
            let changes: [(HTTPMethod, String, JSONValue?)] = [
                (.POST, "applications", ["id": "shop", "name": "Shop"]),
                (.PATCH, "applications/demo", ["name": "Renamed"]),
                (.POST, "applications/demo/clients", ["id": "x", "name": "X", "kind": "web"]),
                (.POST, "devices/\(customer.deviceID)/revoke", nil),
                (.POST, "operators", ["email": "eve@bank.example", "role": "admin"]),
                (.POST, "signing-keys/rotate", nil),
                (.POST, "enrollment-codes", ["external_user_id": "ada@example.com", "client_id": "demo-native"]),
            ]
            for (method, path, body) in changes {
                let refused = try await auditor.call(server, method, path, json: body)
                #expect(refused.status == .forbidden && refused.body["error"]?["code"] == "forbidden", "\(method) \(path)")
            }
            let devices = try await server.admin(.GET, "users?external_user_id=ada@example.com").body
            let userID = try #require(devices.arrayValue?.first?["id"]?.stringValue)
            #expect(try await server.admin(.GET, "users/\(userID)/devices").body.arrayValue?.first?["status"] == "active")
            #expect(try await server.admin(.GET, "operators").body.arrayValue?.count == 1)
            #expect(try await server.admin(.GET, "applications/demo/clients").body.arrayValue?.count == 2)
            #expect(try await Self.events(server, kind: "console_refused").first?["actor"] == "audit@bank.example")
        }
    }

    @Test("a session unused for 30 minutes ends, and none lasts past 12 hours however used")
    func sessionEnds() async throws {
        try await TestServer.run { server in
            let idle = try await SignedInOperator.signIn(server, "ops@bank.example")
            server.clock.advance(by: 29 * 60)
            #expect(try await idle.call(server, .GET, "applications").status == .ok)
            server.clock.advance(by: 29 * 60)
            #expect(try await idle.call(server, .GET, "applications").status == .ok, "each use moves the idle time")
            server.clock.advance(by: 31 * 60)
            #expect(try await idle.call(server, .GET, "applications").status == .unauthorized)

            let busy = try await SignedInOperator.signInAgain(server, idle.phone)
            for _ in 0..<(12 * 60 / 20) {
                server.clock.advance(by: 20 * 60)
                if try await busy.call(server, .GET, "/console/session").status != .ok { break }
            }
            #expect(try await busy.call(server, .GET, "applications").status == .unauthorized)
        }
    }

    @Test("a sign-in token is traded once, only the console's, for a valid signature; a removed operator's session ends at once")
    func signInRefusals() async throws {
        try await TestServer.run { server in
            let phone = try await SignedInOperator.invite(server, "ops@bank.example", role: "admin")
            let token = try await SignedInOperator.signInToken(server, phone)
            #expect(try await server.send(.POST, "/console/session", json: ["token": .string(token)]).status == .created)
            let replayed = try await server.send(.POST, "/console/session", json: ["token": .string(token)])
            #expect(replayed.status == .unauthorized && replayed.headers.first(name: "Set-Cookie") == nil)

            let customer = try await RegisteredPhone.register(server, email: "ada@example.com")
            let demoToken = try await SignedInOperator.signInToken(server, customer, clientID: "demo-web")
            #expect(try await server.send(.POST, "/console/session", json: ["token": .string(demoToken)]).status == .unauthorized)
            let forged = token.split(separator: ".").prefix(2).joined(separator: ".") + ".AAAA"
            #expect(try await server.send(.POST, "/console/session", json: ["token": .string(forged)]).status == .unauthorized)

            let session = try await SignedInOperator.signInAgain(server, phone)
            let operators = try #require(try await server.admin(.GET, "operators").body.arrayValue)
            #expect(operators.first?["enrolled"] == true)
            let id = try #require(operators.first?["id"]?.stringValue)
            #expect(try await server.admin(.DELETE, "operators/\(id)").status == .noContent)
            #expect(try await session.call(server, .GET, "applications").status == .unauthorized)
        }
    }

    @Test("inviting an operator twice, a bad email or role, is refused")
    func inviteRefusals() async throws {
        try await TestServer.run { server in
            let invited = try await server.admin(.POST, "operators", json: ["email": "ops@bank.example", "role": "admin"])
            #expect(invited.status == .created)
            #expect(try await server.admin(.POST, "operators", json: ["email": "OPS@bank.example", "role": "admin"]).status == .conflict)
            #expect(try await server.admin(.POST, "operators", json: ["email": "not-an-email", "role": "admin"]).status == .badRequest)
            #expect(try await server.admin(.POST, "operators", json: ["email": "b@bank.example", "role": "root"]).status == .badRequest)
            let listed = try #require(try await server.admin(.GET, "operators").body.arrayValue)
            #expect(listed.count == 1)
            #expect(listed.first?["enrolled"] == false, "invited, no phone yet")
            #expect(try await server.admin(.DELETE, "operators/opr_nosuch").status == .notFound)
        }
    }
}

extension SignedInOperator {
    /// A new session for an operator already enrolled.
    static func signInAgain(_ server: TestServer, _ phone: RegisteredPhone) async throws -> SignedInOperator {
        let token = try await signInToken(server, phone)
        let (status, body, headers) = try await server.send(.POST, "/console/session", json: ["token": .string(token)])
        #expect(status == .created)
        let setCookie = try #require(headers.first(name: "Set-Cookie"))
        return SignedInOperator(
            email: phone.email, phone: phone, cookie: try #require(setCookie.split(separator: ";").first.map(String.init)),
            csrfToken: try #require(body["csrf_token"]?.stringValue), setCookie: setCookie)
    }
}

@Suite("What makes a console sign-in: the operator's own console phone, number matching, the console's application untouched")
struct ConsoleSignInRulesTests {
    @Test("a phone enrolled for the same email through a bank's app approves no console sign-in")
    func bankPhoneRefused() async throws {
        try await TestServer.run { server in
            let bankPhone = try await RegisteredPhone.register(server, email: "ops@bank.example")
            _ = try await SignedInOperator.invite(server, "ops@bank.example", role: "admin")
            let browser = TestBrowser(client: server.client("countersign-console"))
            let choice = try await browser.signIn("web_login", email: "ops@bank.example")
            let devices = try #require(choice.data?["devices"]?.arrayValue)
            #expect(devices.count == 2)
            // Devices are offered newest first: the console phone, then the bank's.
            let waiting = try await browser.client.submitClientResponse(
                .clientInput, data: ["selected_device_code": try #require(devices.last?["code"])])
            try await bankPhone.approve(otp: try #require(waiting.data?["otp"]?.stringValue), now: server.clock.now())
            let token = try #require(try await browser.poll().token)
            let refused = try await server.send(.POST, "/console/session", json: ["token": .string(token)])
            #expect(refused.status == .forbidden && refused.headers.first(name: "Set-Cookie") == nil)
            let events = try #require(try await server.admin(.GET, "security-events?kind=console_refused").body["security_events"]?.arrayValue)
            #expect(events.first?["device_id"] == .string(bankPhone.deviceID))
        }
    }

    @Test("a sign-in without number matching (a deployment's web_login without the code) opens no session")
    func numberMatchingRequired() async throws {
        let journeys = try TestServer.journeysWithFixtures()
        defer { try? FileManager.default.removeItem(atPath: journeys) }
        let webLogin = journeys + "/web_login.yaml"
        try String(contentsOfFile: webLogin, encoding: .utf8).replacingOccurrences(of: "display_web_otp: true", with: "display_web_otp: false")
            .replacingOccurrences(of: "mobile_journey: mobile_approve_otp", with: "mobile_journey: mobile_approve")
            .write(toFile: webLogin, atomically: true, encoding: .utf8)
        try await TestServer.run(adjust: { $0.journeysDirectory = journeys }) { server in
            let phone = try await SignedInOperator.invite(server, "ops@bank.example", role: "admin")
            let browser = TestBrowser(client: server.client("countersign-console"))
            let waiting = try await browser.signIn("web_login", email: "ops@bank.example")
            #expect(waiting.data?["otp"] == nil)
            try await phone.approve(now: server.clock.now())
            let token = try #require(try await browser.poll().token)
            #expect(try await server.send(.POST, "/console/session", json: ["token": .string(token)]).status == .unauthorized)
        }
    }

    @Test("the console's application is changed only through /admin/v1/operators, and only invitations enroll its phones")
    func builtInApplication() async throws {
        try await TestServer.run { server in
            _ = try await RegisteredPhone.register(server, email: "ada@example.com")
            let users = try #require(try await server.admin(.GET, "users?external_user_id=ada@example.com").body.arrayValue)
            let userID = try #require(users.first?["id"]?.stringValue)
            #expect(try await server.admin(.PATCH, "applications/countersign-console", json: ["allowed_journeys": .null]).status == .forbidden)
            #expect(try await server.admin(.POST, "applications/countersign-console/clients", json: ["id": "x", "name": "X", "kind": "web"]).status == .forbidden)
            #expect(try await server.admin(.PUT, "users/\(userID)/applications/countersign-console").status == .forbidden)
            for body: JSONValue in [
                ["external_user_id": "ada@example.com", "application_id": "countersign-console"],
                ["external_user_id": "ada@example.com", "client_id": "countersign-console-phone"],
            ] {
                #expect(try await server.admin(.POST, "enrollment-codes", json: body).status == .badRequest)
            }
        }
    }

    @Test("removing an operator revokes their console phone and voids their unused invitation")
    func removalRevokes() async throws {
        try await TestServer.run { server in
            let phone = try await SignedInOperator.invite(server, "ops@bank.example", role: "admin")
            let pending = try await server.admin(.POST, "operators", json: ["email": "new@bank.example", "role": "auditor"])
            let unusedCode = try #require(pending.body["enrollment_code"]?.stringValue)
            for email in ["ops@bank.example", "new@bank.example"] {
                let operators = try #require(try await server.admin(.GET, "operators").body.arrayValue)
                let id = try #require(operators.first { $0["email"] == .string(email) }?["id"]?.stringValue)
                #expect(try await server.admin(.DELETE, "operators/\(id)").status == .noContent)
            }
            let users = try #require(try await server.admin(.GET, "users?external_user_id=ops@bank.example").body.arrayValue)
            let user = try await server.admin(.GET, "users/\(try #require(users.first?["id"]?.stringValue))").body
            #expect(user["devices"]?.arrayValue?.first { $0["id"] == .string(phone.deviceID) }?["status"] == "revoked")
            #expect(user["applications"]?.arrayValue?.contains("countersign-console") == false)
            let (_, step) = try await SecureEnrollmentTests.redeem(unusedCode, on: server, client: "countersign-console-phone")
            #expect(step.journeyStepID != JourneyStepID.mobileBiometricsRegistration, "the removed operator's code enrolls nothing")
            let invitedAgain = try await server.admin(.POST, "operators", json: ["email": "ops@bank.example", "role": "admin"])
            #expect(invitedAgain.body["operator"]?["enrolled"] == false, "the old phone is no longer the operator's")
        }
    }

    @Test("in production the session cookie is Secure and held to this host; admin answers are kept by no cache")
    func productionCookie() async throws {
        try await TestServer.run(adjust: { $0.mode = .production }) { server in
            let admin = try await SignedInOperator.signIn(server, "ops@bank.example")
            #expect(admin.setCookie.hasPrefix("__Host-countersign_console=") && admin.setCookie.contains("Secure"))
            let (status, _, headers) = try await server.send(.GET, "/admin/v1/applications", headers: ["Cookie": admin.cookie])
            #expect(status == .ok && headers.first(name: "Cache-Control") == "no-store")
        }
    }
}
