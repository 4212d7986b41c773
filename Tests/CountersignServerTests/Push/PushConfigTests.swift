import CountersignCore
import CountersignPushTesting
@testable import CountersignServer
import Crypto
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

@Suite("Push provider configuration (/admin/v1/push-configs)")
struct PushConfigTests {
    @Test("create, list, show, update and delete; key material is never shown")
    func crud() async throws {
        try await FakePushProviders.run { providers in
            try await TestServer.run { server in
                let created = try await server.admin(.POST, "push-configs", json: providers.apnsConfig)
                #expect(created.status == .created)
                let id = try #require(created.body["id"]?.stringValue)
                #expect(created.body["bundle_id"] == .string(FakePushProviders.bundleID))
                #expect(created.body["key_id"] == .string(FakePushProviders.appleKeyID))
                #expect(created.body["team_id"] == .string(FakePushProviders.appleTeamID))
                #expect(created.body["environment"] == "sandbox" && created.body["private_key_pem"] == nil)

                let fcm = try await server.admin(.POST, "push-configs", json: providers.fcmConfig)
                #expect(fcm.status == .created)
                #expect(fcm.body["project_id"] == .string(FakePushProviders.firebaseProject))
                #expect(fcm.body["client_email"] == .string(FakePushProviders.serviceAccountEmail))
                #expect(fcm.body["service_account"] == nil)

                #expect(try await server.admin(.GET, "push-configs").body.arrayValue?.count == 2)
                #expect(try await server.admin(.GET, "push-configs/\(id)").body["bundle_id"] == .string(FakePushProviders.bundleID))

                let updated = try await server.admin(.PATCH, "push-configs/\(id)", json: ["environment": "production"])
                #expect(updated.status == .ok && updated.body["environment"] == "production")
                #expect(updated.body["key_id"] == .string(FakePushProviders.appleKeyID), "fields not given are kept")

                #expect(try await server.admin(.DELETE, "push-configs/\(id)").status == .noContent)
                #expect(try await server.admin(.GET, "push-configs/\(id)").status == .notFound)
                #expect(try await server.admin(.GET, "push-configs").body.arrayValue?.count == 1)
                #expect(try await server.send(.GET, "/admin/v1/push-configs").status == .unauthorized)
            }
        }
    }

    @Test("an update takes effect on the next push: the gateway is rebuilt from the stored configuration")
    func updateReachesTheGateway() async throws {
        try await FakePushProviders.run { providers in
            try await TestServer.run { server in
                var wrong = providers.apnsConfig.objectValue ?? [:]
                wrong["team_id"] = "WRONGTEAM1"
                let created = try await server.admin(.POST, "push-configs", json: .object(wrong))
                let id = try #require(created.body["id"]?.stringValue)
                _ = try await RegisteredPhone.register(
                    server, email: "ada@example.com", channel: "apns", token: DeviceTokens.apple, appID: FakePushProviders.bundleID)
                let browser = TestBrowser(server)
                _ = try await browser.signIn(email: "ada@example.com")
                try await eventually("Apple refused the provider token") { providers.apns.requests.count == 2 }
                #expect(providers.apns.requests.map(\.reason) == ["InvalidProviderToken", "InvalidProviderToken"])
                // A refusal that is not about the device is final: recorded once, not retried.
                let approvalID = try #require(try providers.apnsPayload(0)["approval_id"])
                try await eventually("the refusal is recorded") { try await server.deliveries(of: approvalID).count == 1 }
                let refusal = try #require(try await server.deliveries(of: approvalID).first)
                #expect(refusal["status"] == "rejected" && refusal["reason"] == "InvalidProviderToken")
                #expect((refusal["next_attempt_at"] ?? .null) == .null, "no retry is scheduled")
                #expect(try await browser.pollLater(server).data?["push_status"] == "failed")
                // The job is closed, so the sender has nothing more to send.
                let sql = server.sql
                let job = try await sql.raw("SELECT status FROM push_jobs").first(decoding: [String: String].self)
                #expect(job?["status"] == "failed")
                #expect(providers.apns.requests.count == 2)

                #expect(try await server.admin(.PATCH, "push-configs/\(id)", json: ["team_id": .string(FakePushProviders.appleTeamID)]).status == .ok)
                server.clock.advance(by: 11)  // past the backoff after a request that was not approved
                _ = try await TestBrowser(server).signIn(email: "ada@example.com")
                try await eventually("the corrected key is used") { providers.apns.requests.last?.status == 200 }
            }
        }
    }

    @Test("bad input is refused with a message naming the problem, and nothing is stored", arguments: [
        (["type": "webpush"], "type must be apns or fcm"),
        (["type": "apns", "bundle_id": "com.example.bank"], "missing key_id, team_id, environment, private_key_pem"),
        (["type": "apns", "bundle_id": "com.example.bank", "key_id": "KEY1234567", "team_id": "team-1", "environment": "sandbox", "private_key_pem": "x"], "team_id must be 10 letters or digits"),
        (["type": "apns", "bundle_id": "com.example.bank", "key_id": "KEY12", "team_id": "TEAM123456", "environment": "sandbox", "private_key_pem": "x"], "key_id must be 10 letters or digits"),
        (["type": "apns", "bundle_id": "com.example.bank", "key_id": "KEY1234567", "team_id": "TEAM123456", "environment": "sandbox", "private_key_pem": "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----"], "private_key_pem is not a P-256 private key"),
        (["type": "apns", "bundle_id": "com.example.bank", "key_id": "KEY1234567", "team_id": "TEAM123456", "environment": "staging", "private_key_pem": "x"], "environment must be production or sandbox"),
        (["type": "fcm", "service_account": ["type": "service_account", "project_id": "p"]], "service_account: the service account is missing client_email, private_key, private_key_id, token_uri"),
        (["type": "fcm", "service_account": "not json"], "service_account: the service account must be the JSON key file"),
        (["type": "fcm"], "missing service_account"),
        (["type": "fcm", "service_account": ["client_email": "a@b", "private_key": "x", "private_key_id": "k", "token_uri": "https://t", "project_id": "p"]], "private_key is not an RSA private key"),
        (["type": "fcm", "endpoint": "http://fcm.example.com"], "endpoint must be an https URL"),
        (["type": "fcm", "name": ""], "'name' must be 1 to 128 characters"),
        (["type": "apns", "name": "Bank\nApp"], "'name' may hold no control character"),
        (["type": "fcm", "token_endpoint": "http://oauth2.example.com/token"], "token_endpoint must be an https URL"),
        (["type": "fcm", "token_endpoint": "https://oauth2.example.com/token?audience=x"], "token_endpoint must be an https URL"),
        (["type": "apns", "endpoint": "https://relay:secret@push-proxy.example.com"], "endpoint must be an https URL"),
        (["type": "apns", "endpoint": "https://push-proxy.example.com#x"], "endpoint must be an https URL"),
        (["type": "fcm", "service_account": ["client_email": "a@b", "private_key": "x", "private_key_id": "k", "token_uri": "http://10.0.0.5:8500/token", "project_id": "p"]], "token_uri must be an https URL"),
    ] as [(JSONValue, String)])
    func refusals(body: JSONValue, message: String) async throws {
        try await TestServer.run { server in
            let refused = try await server.admin(.POST, "push-configs", json: body)
            #expect(refused.status == .badRequest)
            #expect(refused.body["error"]?["code"] == "invalid_push_config")
            let text = refused.body["error"]?["message"]?.stringValue ?? ""
            #expect(text.contains(message), "\(text)")
            #expect(try await server.admin(.GET, "push-configs").body.arrayValue?.isEmpty == true)
        }
    }

    @Test("each configuration has a name (its app id unless given), its own FCM token endpoint and its own certificate authority")
    func contractFields() async throws {
        try await FakePushProviders.run { providers in
            try await TestServer.run { server in
                // The key file's token_uri leads nowhere: only the configured token endpoint can grant tokens.
                var account = providers.serviceAccount.objectValue ?? [:]
                account["token_uri"] = "https://oauth2.invalid/token"
                var fcm = providers.fcmConfig.objectValue ?? [:]
                fcm["service_account"] = .object(account)
                fcm["token_endpoint"] = .string(providers.google.tokenURI)
                let fcmCreated = try await server.admin(.POST, "push-configs", json: .object(fcm))
                #expect(fcmCreated.status == .created)
                #expect(fcmCreated.body["type"] == "fcm" && fcmCreated.body["name"] == "Bank app (Android)")
                #expect(fcmCreated.body["token_endpoint"] == .string(providers.google.tokenURI))

                // Without the fake's authority, Apple's stand-in is not trusted: nothing reaches it.
                var untrusted = providers.apnsConfig.objectValue ?? [:]
                untrusted["ca_certificate_pem"] = nil
                untrusted["name"] = nil
                let apnsCreated = try await server.admin(.POST, "push-configs", json: .object(untrusted))
                #expect(apnsCreated.body["name"] == .string(FakePushProviders.bundleID))
                let apnsID = try #require(apnsCreated.body["id"]?.stringValue)

                let ada = try await RegisteredPhone.register(
                    server, email: "ada@example.com", channel: "apns", token: DeviceTokens.apple, appID: FakePushProviders.bundleID)
                _ = try await RegisteredPhone.register(
                    server, email: "grace@example.com", channel: "fcm", token: DeviceTokens.firebase, appID: nil)
                _ = try await TestBrowser(server).signIn(email: "grace@example.com")
                try await eventually("the FCM push is sent with a token from the configured endpoint") {
                    providers.google.received.count == 1
                }
                #expect(providers.google.issuedTokens.count == 1)

                _ = try await TestBrowser(server).signIn(email: "ada@example.com")
                func adaDeliveries() async throws -> [JSONValue] {
                    try await server.admin(.GET, "push-deliveries?device_id=\(ada.deviceID)").body.arrayValue ?? []
                }
                try await eventually("the untrusted attempt is recorded") { try await adaDeliveries().count == 1 }
                let failed = try #require(try await adaDeliveries().first)
                #expect(failed["status"] == "retry_scheduled")
                #expect(failed["reason"]?.stringValue?.hasPrefix("network") == true)
                #expect(providers.apns.requests.isEmpty)

                let badAuthority = try await server.admin(.PATCH, "push-configs/\(apnsID)", json: [
                    "ca_certificate_pem": "not a certificate", "private_key_pem": .string(providers.appleKey.pemRepresentation),
                ])
                #expect(badAuthority.status == .badRequest)
                #expect(badAuthority.body["error"]?["message"]?.stringValue?.contains("ca_certificate_pem is not a certificate") == true)
                let trusted = try await server.admin(.PATCH, "push-configs/\(apnsID)", json: [
                    "ca_certificate_pem": .string(providers.apns.certificateAuthority.rootCertificatePEM),
                    "private_key_pem": .string(providers.appleKey.pemRepresentation),
                ])
                #expect(trusted.status == .ok)
                server.clock.advance(by: 11)  // past the backoff after a request that was not approved
                _ = try await TestBrowser(server).signIn(email: "ada@example.com")
                try await eventually("with its authority the configuration reaches Apple's stand-in") { providers.apns.requests.last?.status == 200 }
            }
        }
    }

    @Test("an update that sends the credentials somewhere else needs the key material again: the stored key never goes to a new destination", arguments: [
        ("apns", "endpoint", "https://push-proxy.evil.example"), ("apns", "ca_certificate_pem", "(the fake's authority)"),
        ("fcm", "endpoint", "https://fcm.evil.example"), ("fcm", "token_endpoint", "https://oauth2.evil.example/token"),
    ])
    func newDestinationNeedsTheKey(provider: String, field: String, value: String) async throws {
        try await FakePushProviders.run { providers in
            try await TestServer.run { server in
                let apple = provider == "apns"
                let created = try await server.admin(.POST, "push-configs", json: apple ? providers.apnsConfig : providers.fcmConfig)
                let id = try #require(created.body["id"]?.stringValue)
                let destination = field == "ca_certificate_pem" ? providers.google.certificateAuthority.rootCertificatePEM : value

                let refused = try await server.admin(.PATCH, "push-configs/\(id)", json: [field: .string(destination)])
                #expect(refused.status == .badRequest)
                let message = refused.body["error"]?["message"]?.stringValue ?? ""
                #expect(message.contains("missing \(apple ? "private_key_pem" : "service_account")"), "\(message)")
                #expect(try await server.admin(.GET, "push-configs/\(id)").body == created.body, "nothing changed")

                let key: JSONValue = apple ? .string(providers.appleKey.pemRepresentation) : providers.serviceAccount
                let keyField = apple ? "private_key_pem" : "service_account"
                let confirmed = try await server.admin(.PATCH, "push-configs/\(id)", json: [field: .string(destination), keyField: key])
                #expect(confirmed.status == .ok)
                // An empty value goes back to the provider's own (the system's trust), with the key again too.
                #expect(try await server.admin(.PATCH, "push-configs/\(id)", json: [field: ""]).status == .badRequest)
                let back = try await server.admin(.PATCH, "push-configs/\(id)", json: [field: "", keyField: key])
                #expect(back.status == .ok)
                #expect(back.body[field] == nil, "\(back.body)")
            }
        }
    }

    @Test("a token endpoint's redirect is not followed, and what it answers is not shown back beyond its status and OAuth error code; a redirect or refusal is final, a 408 is tried again")
    func tokenEndpointAnswersStayThere() async throws {
        try await FakePushProviders.run { providers in
            let elsewhere = try await FakeProviderServer.start(authority: providers.google.certificateAuthority) { router in
                router.post("redirect") { _, _ in
                    Response(status: .temporaryRedirect, headers: [.location: providers.google.tokenURI])
                }
                router.post("refuse") { _, _ in
                    Response(
                        status: .badRequest,
                        body: .init(byteBuffer: ByteBuffer(string: #"{"error":"invalid_grant","internal":"db-password-here"}"#)))
                }
                router.post("busy") { _, _ in Response(status: .requestTimeout) }
            }
            let url = elsewhere.url
            do {
                try await refusedByTokenEndpoint(providers, at: url)
            } catch {
                await elsewhere.stop()
                throw error
            }
            await elsewhere.stop()
        }
    }

    /// Sign-ins pushed with an FCM configuration whose token endpoint is `url`'s `/redirect`, then its `/refuse`.
    private func refusedByTokenEndpoint(_ providers: FakePushProviders, at url: String) async throws {
        try await TestServer.run { server in
            var fcm = providers.fcmConfig.objectValue ?? [:]
            fcm["token_endpoint"] = .string(url + "/redirect")
            let id = try #require(try await server.admin(.POST, "push-configs", json: .object(fcm)).body["id"]?.stringValue)
            let phone = try await RegisteredPhone.register(
                server, email: "grace@example.com", channel: "fcm", token: DeviceTokens.firebase, appID: nil)
            func reasons() async throws -> [String] {
                (try await server.admin(.GET, "push-deliveries?device_id=\(phone.deviceID)").body.arrayValue ?? [])
                    .compactMap { $0["reason"]?.stringValue }
            }

            _ = try await TestBrowser(server).signIn(email: "grace@example.com")
            try await eventually("the attempt is recorded") { try await reasons().count == 1 }
            #expect(try await reasons() == ["access token: token endpoint answered 307"])
            // A refusal asking again cannot mend (a redirect, a revoked key) is final, as a send's 4xx is.
            let first = try #require(try await server.admin(.GET, "push-deliveries?device_id=\(phone.deviceID)").body.arrayValue?.first)
            #expect(first["status"] == "rejected" && (first["next_attempt_at"] ?? .null) == .null)
            #expect(providers.google.issuedTokens.isEmpty, "the redirect was not followed to a token")

            #expect(try await server.admin(.PATCH, "push-configs/\(id)", json: [
                "token_endpoint": .string(url + "/refuse"), "service_account": providers.serviceAccount,
            ]).status == .ok)
            server.clock.advance(by: 3700)
            _ = try await TestBrowser(server).signIn(email: "grace@example.com")
            try await eventually("the second attempt is recorded") { try await reasons().count == 2 }
            #expect(try await reasons().first == "access token: token endpoint answered 400: invalid_grant")
            let second = try #require(try await server.admin(.GET, "push-deliveries?device_id=\(phone.deviceID)").body.arrayValue?.first)
            #expect(second["status"] == "rejected" && (second["next_attempt_at"] ?? .null) == .null)

            // A 408 may pass: the push is tried again.
            #expect(try await server.admin(.PATCH, "push-configs/\(id)", json: [
                "token_endpoint": .string(url + "/busy"), "service_account": providers.serviceAccount,
            ]).status == .ok)
            server.clock.advance(by: 3700)
            _ = try await TestBrowser(server).signIn(email: "grace@example.com")
            try await eventually("the third attempt is recorded") { try await reasons().count == 3 }
            let third = try #require(try await server.admin(.GET, "push-deliveries?device_id=\(phone.deviceID)").body.arrayValue?.first)
            #expect(third["status"] == "retry_scheduled" && third["reason"] == "access token: token endpoint answered 408")
        }
    }

    /// Sends to one FCM project share a request for its access token. One whose answer never ends (headers,
    /// then silence) must not keep every later send waiting, nor hold an attempt beyond its time limit.
    @Test("a token endpoint that sends its headers and then stalls holds up no push beyond its attempt's time limit, and the next attempt asks again")
    func stalledTokenEndpoint() async throws {
        try await FakePushProviders.run { providers in
            let stalls = StalledAnswers()
            let stalling = try await FakeProviderServer.start(authority: providers.google.certificateAuthority) { router in
                router.post("token") { _, _ in
                    stalls.arrived()
                    return Response(status: .ok, body: ResponseBody { writer in
                        try await writer.write(ByteBuffer(string: "{"))
                        await stalls.held()
                        try await writer.finish(nil)
                    })
                }
            }
            let url = stalling.url
            do {
                try await TestServer.run(adjust: { $0.pushAttemptTimeLimit = 1 }) { server in
                    var fcm = providers.fcmConfig.objectValue ?? [:]
                    fcm["token_endpoint"] = .string(url + "/token")
                    #expect(try await server.admin(.POST, "push-configs", json: .object(fcm)).status == .created)
                    let phone = try await RegisteredPhone.register(
                        server, email: "grace@example.com", channel: "fcm", token: DeviceTokens.firebase, appID: nil)
                    func deliveries() async throws -> [JSONValue] {
                        try await server.admin(.GET, "push-deliveries?device_id=\(phone.deviceID)").body.arrayValue ?? []
                    }

                    _ = try await TestBrowser(server).signIn(email: "grace@example.com")
                    try await eventually("the first attempt ended") { try await deliveries().count == 1 }
                    let first = try #require(try await deliveries().first)
                    #expect(first["status"] == "retry_scheduled")

                    server.clock.advance(by: try server.retryDelay(first) + 1)
                    try await eventually("the retry asked for a token again") { stalls.count == 2 }
                    try await eventually("the retry ended") { try await deliveries().count == 2 }
                    #expect(try await deliveries().first?["status"] == "retry_scheduled")
                }
            } catch {
                stalls.release()
                await stalling.stop()
                throw error
            }
            stalls.release()
            await stalling.stop()
        }
    }

    /// A configuration written under another master key, or damaged in the database, must not take the
    /// other configurations down with it, nor have its pushes sent through another app's key and topic.
    @Test("a configuration that no longer opens is left out: its app's pushes are rejected, not sent through another app, and the other apps go on sending")
    func oneConfigurationThatDoesNotOpen() async throws {
        try await FakePushProviders.withPhone(on: "apns") { providers, server, phone in
            var other = providers.apnsConfig.objectValue ?? [:]
            other["bundle_id"] = "com.example.other"
            try await server.configurePush(.object(other))
            let grace = try await RegisteredPhone.register(
                server, email: "grace@example.com", channel: "apns", token: DeviceTokens.otherApple, appID: "com.example.other")
            let sql = server.sql
            try await sql.raw("UPDATE push_configs SET sealed_secret = 'damaged' WHERE app_id = 'com.example.other'").run()

            _ = try await TestBrowser(server).signIn(email: "grace@example.com")
            try await eventually("Grace's push is recorded") { try await server.admin(.GET, "push-deliveries?device_id=\(grace.deviceID)").body.arrayValue?.count == 1 }
            let refused = try #require(try await server.admin(.GET, "push-deliveries?device_id=\(grace.deviceID)").body.arrayValue?.first)
            #expect(refused["status"] == "rejected")
            #expect(refused["reason"] == "no APNs configuration for bundle id 'com.example.other'")
            #expect(!providers.apns.requests.contains { $0.deviceToken == DeviceTokens.otherApple }, "nothing went out under another app's topic")

            _ = try await TestBrowser(server).signIn(email: "ada@example.com")
            try await eventually("Apple received Ada's push") { providers.apns.requests.contains { $0.status == 200 } }
            #expect(try await phone.approve(fromPush: providers.apnsPayload(0)).journeyStepID == JourneyStepID.success)
        }
    }

    /// Apple throttles a key whose provider token is renewed more often than every 20 minutes: an edit that
    /// leaves the key as it was must not make a new token.
    @Test("renaming a configuration, or adding another, keeps the provider token of a key that did not change")
    func editsKeepProviderTokens() async throws {
        try await FakePushProviders.withPhone(on: "apns") { providers, server, phone in
            let browser = TestBrowser(server)
            _ = try await browser.signIn(email: "ada@example.com")
            try await eventually("Apple received the first push") { providers.apns.requests.count == 1 }
            let first = try #require(providers.apns.requests.first?.providerToken)
            #expect(try await phone.approve(fromPush: providers.apnsPayload(0)).journeyStepID == JourneyStepID.success)

            let id = try #require(try await server.admin(.GET, "push-configs").body.arrayValue?.first?["id"]?.stringValue)
            #expect(try await server.admin(.PATCH, "push-configs/\(id)", json: ["name": "Renamed"]).status == .ok)
            try await server.configurePush(providers.fcmConfig)

            _ = try await TestBrowser(server).signIn(email: "ada@example.com")
            try await eventually("Apple received the second push") { providers.apns.requests.count == 2 }
            #expect(providers.apns.requests.last?.providerToken == first)
        }
    }

    @Test("a second configuration for the same bundle id is 409; a bad update changes nothing")
    func conflictsAndBadUpdates() async throws {
        try await FakePushProviders.run { providers in
            try await TestServer.run { server in
                let id = try #require(try await server.admin(.POST, "push-configs", json: providers.apnsConfig).body["id"]?.stringValue)
                let again = try await server.admin(.POST, "push-configs", json: providers.apnsConfig)
                #expect(again.status == .conflict && again.body["error"]?["code"] == "already_exists")

                let badTeam = try await server.admin(.PATCH, "push-configs/\(id)", json: ["team_id": "nope"])
                #expect(badTeam.status == .badRequest)
                let switched = try await server.admin(.PATCH, "push-configs/\(id)", json: ["type": "fcm"])
                #expect(switched.status == .badRequest)
                let stored = try await server.admin(.GET, "push-configs/\(id)").body
                #expect(stored["team_id"] == .string(FakePushProviders.appleTeamID))
                #expect(try await server.admin(.PATCH, "push-configs/pcf_missing", json: ["team_id": "TEAM123456"]).status == .notFound)
            }
        }
    }

    @Test("key material is encrypted at rest and appears in no admin response and no log line")
    func secretsStaySecret() async throws {
        try await FakePushProviders.run { providers in
            let store = LogStore()
            try await TestDatabase.with { database in
                let masterKey = TestServer.randomMasterKey()
                guard case .key(let masterKeyBytes) = masterKey else { Issue.record("the master key is not given as bytes"); return }
                try await TestServer.run(
                    on: database, clock: TestClock(), masterKey: masterKey,
                    logger: Logger(label: "countersign.tests.capture") { _ in CapturingLogHandler(store: store) }
                ) { server in
                    var responses: [String] = []
                    func record(_ reply: (status: HTTPStatus, body: JSONValue)) -> JSONValue {
                        responses.append("\(reply.body)")
                        return reply.body
                    }
                    let apnsID = try #require(record(try await server.admin(.POST, "push-configs", json: providers.apnsConfig))["id"]?.stringValue)
                    let fcmID = try #require(record(try await server.admin(.POST, "push-configs", json: providers.fcmConfig))["id"]?.stringValue)
                    _ = record(try await server.admin(.GET, "push-configs"))
                    _ = record(try await server.admin(.GET, "push-configs/\(apnsID)"))
                    _ = record(try await server.admin(.PATCH, "push-configs/\(apnsID)", json: ["private_key_pem": .string(providers.appleKey.pemRepresentation)]))
                    _ = record(try await server.admin(.PATCH, "push-configs/\(fcmID)", json: ["service_account": providers.serviceAccount]))
                    // A refused update carrying the key must not echo it either.
                    _ = record(try await server.admin(.PATCH, "push-configs/\(apnsID)", json: ["private_key_pem": .string(providers.appleKey.pemRepresentation), "team_id": "bad"]))

                    // Both providers are used, so the key material is opened and signed with.
                    _ = try await RegisteredPhone.register(
                        server, email: "ada@example.com", channel: "apns", token: DeviceTokens.apple, appID: FakePushProviders.bundleID)
                    _ = try await RegisteredPhone.register(
                        server, email: "grace@example.com", channel: "fcm", token: DeviceTokens.firebase, appID: nil)
                    _ = try await TestBrowser(server).signIn(email: "ada@example.com")
                    _ = try await TestBrowser(server).signIn(email: "grace@example.com")
                    try await eventually("both pushes are sent") {
                        providers.apns.requests.count == 1 && providers.google.received.count == 1
                    }

                    let sql = server.sql
                    let rows = try await sql.raw("SELECT sealed_secret, key_id, issuer, app_id FROM push_configs").all()
                    #expect(rows.count == 2)
                    let stored = try rows.map { row in
                        try ["sealed_secret", "key_id", "issuer", "app_id"].map { try row.decode(column: $0, as: String.self) }.joined(separator: " ")
                    }
                    let logs = store.lines.withLock { $0 }.joined(separator: "\n")
                    let signingKey = try #require(try await sql.raw("SELECT id, private_key_pem FROM signing_keys").first(decoding: [String: String].self))
                    #expect(logs.contains("/admin/v1/push-configs"), "the server's log lines were captured")
                    // The key is sealed with the master key, bound to its kid.
                    let sealedText = try #require(signingKey["private_key_pem"])
                    let sealedKey = try AES.GCM.SealedBox(combined: try #require(Data(base64Encoded: sealedText)))
                    let kid = try #require(signingKey["id"])
                    let pem = try AES.GCM.open(sealedKey, using: SymmetricKey(data: masterKeyBytes), authenticating: Data(kid.utf8))
                    let tokenSigningKey = try P256.Signing.PrivateKey(pemRepresentation: String(decoding: pem, as: UTF8.self))
                    for fragment in FakePushProviders.fragments(of: tokenSigningKey) {
                        #expect(!logs.contains(fragment), "a log line shows the token signing key")
                    }
                    for fragment in providers.secretFragments + FakePushProviders.fragments(ofSecret: masterKeyBytes) {
                        #expect(!responses.joined().contains(fragment), "an admin response shows key material")
                        #expect(!logs.contains(fragment), "a log line shows key material")
                        #expect(!stored.joined().contains(fragment), "key material is stored in the clear")
                    }
                    #expect(!logs.contains("ya29."), "a log line shows an access token")
                }
            }
        }
    }

    @Test("without COUNTERSIGN_MASTER_KEY a key file is made with mode 0600 and reused; a wrong key stops the server at start")
    func masterKeyFile() async throws {
        try await FakePushProviders.run { providers in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let keyFile = directory.appendingPathComponent("master-key").path
            try await TestDatabase.with(persistent: true) { database in
                try await TestServer.run(on: database, clock: TestClock(), masterKey: .file(keyFile)) { server in
                    try await server.configurePush(providers.apnsConfig)
                }
                let mode = try #require(try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? NSNumber)
                #expect(mode.intValue == 0o600)
                try await TestServer.run(on: database, clock: TestClock(), masterKey: .file(keyFile)) { server in
                    let configs = try await server.admin(.GET, "push-configs").body.arrayValue
                    #expect(configs?.count == 1)
                }

                await #expect {
                    try await TestServer.run(on: database, clock: TestClock(), masterKey: TestServer.randomMasterKey()) { _ in }
                } throws: { error in
                    "\(error)".contains("cannot be decrypted: the master key is not the one it was stored with")
                }

                try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyFile)
                await #expect {
                    try await TestServer.run(on: database, clock: TestClock(), masterKey: .file(keyFile)) { _ in }
                } throws: { error in
                    "\(error)".contains("can be read by others")
                }
            }
        }
    }
}

/// Answers held until the test releases them, and how many requests came.
private final class StalledAnswers: Sendable {
    private let requests = Mutex(0)
    private let isReleased = Mutex(false)

    var count: Int { requests.withLock { $0 } }

    func arrived() {
        requests.withLock { $0 += 1 }
    }

    /// Returns once `release()` is called (any number of answers may wait at once).
    func held() async {
        while !isReleased.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(20)) }
    }

    func release() {
        isReleased.withLock { $0 = true }
    }
}
