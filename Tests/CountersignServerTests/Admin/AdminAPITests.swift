import CountersignCore
import CountersignServer
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

@Suite("Admin API")
struct AdminAPITests {
    @Test("requests without the admin key are refused", arguments: [nil, "wrong-key-0123456789"] as [String?])
    func needsKey(bearer: String?) async throws {
        try await TestServer.run { server in
            let response = try await server.send(.GET, "/admin/v1/applications", bearer: bearer)
            #expect(response.status == .unauthorized)
            #expect(response.body["error"]?["code"] == .string(ErrorCode.invalidToken))
        }
    }

    @Test("a listing's limit must be a whole number from 1 to 1000 (a negative one is not \"no limit\")", arguments: [
        "users", "evidence", "push-deliveries", "security-events",
    ])
    func listLimits(listing: String) async throws {
        try await TestServer.run { server in
            for limit in ["-1", "0", "1001", "ten", "2.5"] {
                let refused = try await server.admin(.GET, "\(listing)?limit=\(limit)")
                #expect(refused.status == .badRequest, "\(listing) limit=\(limit)")
                #expect(refused.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            }
            #expect(try await server.admin(.GET, "\(listing)?limit=1000").status == .ok)
        }
    }

    @Test("the demo application has a web and a native client")
    func demoApplication() async throws {
        try await TestServer.run { server in
            let applications = try await server.admin(.GET, "applications").body.arrayValue ?? []
            let demo = try #require(applications.first { $0["id"] == "demo" })
            let clients = demo["clients"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
            #expect(clients == ["demo-native", "demo-web"])
            #expect(demo["clients"]?.arrayValue?.first { $0["id"] == "demo-web" }?["kind"] == "web")
        }
    }

    @Test("applications and clients can be created, and duplicates are refused")
    func createApplicationAndClients() async throws {
        try await TestServer.run { server in
            #expect(try await server.admin(.POST, "applications", json: ["id": "bank", "name": "Bank"]).status == .created)
            #expect(try await server.admin(.POST, "applications", json: ["id": "bank", "name": "Bank"]).status == .conflict)
            let client = try await server.admin(.POST, "applications/bank/clients", json: ["id": "bank-web", "name": "Web", "kind": "web"])
            #expect(client.status == .created)
            #expect(client.body["application_id"] == "bank")
            #expect(try await server.admin(.POST, "applications/bank/clients", json: ["id": "x", "name": "X", "kind": "tv"]).status == .badRequest)
            #expect(try await server.admin(.GET, "applications/bank/clients").body.arrayValue?.count == 1)
            #expect(try await server.admin(.GET, "applications/nope/clients").status == .notFound)
            // The new client can start journeys.
            let started = try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "bank-web"])
            #expect(started.status == .ok)
        }
    }

    @Test("a name (application, client) is 1 to 128 characters without a control character: an empty one, a longer one, a line break or a direction override is refused and nothing is changed", arguments: [
        "", String(repeating: "a", count: 129), "Bank\nsecurity event forged", "Bank\t", "Bank \u{202E}knaB",
    ])
    func names(name: String) async throws {
        try await TestServer.run { server in
            let created = try await server.admin(.POST, "applications", json: ["id": "bank", "name": .string(name)])
            #expect(created.status == .badRequest)
            #expect(created.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            #expect(try await server.admin(.POST, "applications", json: ["id": "bank", "name": .string(String(repeating: "ä", count: 128))]).status == .created)
            #expect(try await server.admin(.PATCH, "applications/bank", json: ["name": .string(name)]).status == .badRequest)
            let client = try await server.admin(.POST, "applications/bank/clients", json: ["id": "bank-web", "name": .string(name), "kind": "web"])
            #expect(client.status == .badRequest)
            let bank = try #require(try await server.admin(.GET, "applications").body.arrayValue?.first { $0["id"] == "bank" })
            #expect(bank["name"] == .string(String(repeating: "ä", count: 128)))
            #expect(bank["clients"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test("a user is found by external id: from the email a person gives to the device to revoke")
    func userByExternalID() async throws {
        try await TestServer.run { server in
            let ada = try await RegisteredPhone.register(server, email: "ada@example.com")
            _ = try await RegisteredPhone.register(server, email: "bob@example.com")
            let found = try #require(try await server.admin(.GET, "users?external_user_id=ada%40example.com").body.arrayValue)
            #expect(found.count == 1)
            #expect(found.first?["external_user_id"] == "ada@example.com")
            let userID = try #require(found.first?["id"]?.stringValue)
            let devices = try #require(try await server.admin(.GET, "users/\(userID)/devices").body.arrayValue)
            #expect(devices.map { $0["id"] } == [.string(ada.deviceID)])
            #expect(try await server.admin(.GET, "users?external_user_id=nobody%40example.com").body.arrayValue == [])
        }
    }

    @Test("journeys can be listed and shown")
    func journeys() async throws {
        try await TestServer.run { server in
            let ids = try await server.admin(.GET, "journeys").body.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            #expect(ids.contains("mobile_registration"))
            #expect(ids.contains("mobile_login"))
            let journey = try await server.admin(.GET, "journeys/mobile_registration").body
            #expect(journey["steps"]?.arrayValue?.first?["type"] == "enrollment_code")
            #expect(try await server.admin(.GET, "journeys/nope").status == .notFound)
        }
    }

    @Test("user listings never show key material or push tokens")
    func noSecretsInListings() async throws {
        try await TestServer.run { server in
            let phone = TestPhone(client: server.client())
            await phone.client.setPushToken("abcdef0123", channel: "apns", appID: "com.example")
            let token = try #require(try await phone.register(email: "ada@example.com").token)
            let userID = try await server.verifiedClaims(token).sub
            let response = try await server.send(.GET, "/admin/v1/users/\(userID)", bearer: TestServer.adminKey)
            #expect(response.status == .ok)
            #expect(response.body["devices"]?.arrayValue?.count == 1, "the listing shows the device, without its secrets")
            let text = String(decoding: try JSONEncoder().encode(response.body), as: UTF8.self)
            #expect(!text.contains("abcdef0123"))
            #expect(!text.contains("public_key\""))
            #expect(try await server.admin(.GET, "users/usr_nope").status == .notFound)
        }
    }

    @Test("without a configured key one is generated at first start, announced once and kept as a hash")
    func generatedAdminKey() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = Configuration(
            database: .sqliteFile(directory.appendingPathComponent("db.sqlite").path), adminKey: nil,
            journeysDirectory: TestServer.journeysDirectory, masterKey: .file(directory.appendingPathComponent("master-key").path))
        let announced = Mutex<[String]>([])
        for _ in 0..<2 {
            let app = try await CountersignApp.make(
                configuration: configuration, dependencies: .init(announceAdminKey: { key in announced.withLock { $0.append(key) } }),
                logger: TestServer.quietLogger)
            let key = try #require(announced.withLock { $0.first })
            try await withServices(app.services, logger: app.logger) {
                let headers: HTTPHeaders = ["Authorization": "Bearer \(key)"]
                let answer = try await TestServer.request(app, .GET, "/admin/v1/applications", headers: headers)
                #expect(answer.status == .ok)
            }
            // Read once the server has let the file go: a descriptor of it closed in the server's own
            // process would drop SQLite's hold on it (`CSQLiteSettings.h`).
            let database = try String(contentsOfFile: directory.appendingPathComponent("db.sqlite").path, encoding: .isoLatin1)
            // The log is left behind when the server stops with its readers still open; not always.
            let log = (try? String(contentsOfFile: directory.appendingPathComponent("db.sqlite-wal").path, encoding: .isoLatin1)) ?? ""
            #expect(!database.contains(key) && !log.contains(key))
        }
        #expect(announced.withLock { $0.count } == 1)
    }
}
