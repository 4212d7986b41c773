import CountersignCore
import Foundation
import Testing

@Suite("Which client may start which journey")
struct ClientKindTests {
    @Test("a web client cannot start a phone journey, a native client cannot start a web journey, and nobody starts a mobile approve journey directly", arguments: [
        ("mobile_registration", "demo-web"), ("mobile_login", "demo-web"), ("mobile_transaction_signing", "demo-web"),
        ("web_login", "demo-native"), ("web_transaction_signing", "demo-native"),
        ("mobile_approve", "demo-native"), ("mobile_approve_otp", "demo-native"), ("mobile_approve_add_phone", "demo-native"),
        ("mobile_approve_transaction", "demo-web"),
        ("mobile_approve_transaction", "demo-native"),
    ])
    func refused(journey: String, client: String) async throws {
        try await TestServer.run { server in
            let refused = try await server.send(.POST, "/v1/journeys/\(journey)/start", json: ["client_id": .string(client)])
            #expect(refused.status == .forbidden)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.journeyNotForClient))
            #expect(try await server.count("interactions") == 0)
        }
    }

    @Test("a production server does not load the sign-in without number matching, for an attacker to pick over web_login; its phone journey starts only from a push although no loaded journey pushes it")
    func noWeakerSignInInProduction() async throws {
        try await TestServer.run(adjust: { $0.mode = .production }) { server in
            #expect(try await server.admin(.POST, "applications", json: ["id": "bank", "name": "Bank"]).status == .created)
            for (id, kind) in [("bank-web", "web"), ("bank-app", "native")] {
                let created = try await server.admin(.POST, "applications/bank/clients", json: ["id": .string(id), "name": "C", "kind": .string(kind)])
                #expect(created.status == .created)
            }
            let weaker = try await server.send(.POST, "/v1/journeys/web_login_biometric_only/start", json: ["client_id": "bank-web"])
            #expect(weaker.status == .notFound)
            #expect(try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "bank-web"]).status == .ok)
            let direct = try await server.send(.POST, "/v1/journeys/mobile_approve/start", json: ["client_id": "bank-app"])
            #expect(direct.status == .forbidden)
            #expect(direct.body["error"]?["code"] == .string(ErrorCode.journeyNotForClient))
        }
    }

    @Test("each client starts its own kind of journey")
    func allowed() async throws {
        try await TestServer.run { server in
            for (journey, client) in [("web_login", "demo-web"), ("mobile_registration", "demo-native"), ("mobile_login", "demo-native")] {
                let started = try await server.send(.POST, "/v1/journeys/\(journey)/start", json: ["client_id": .string(client)])
                #expect(started.status == .ok, "\(journey) from \(client)")
            }
        }
    }
}
