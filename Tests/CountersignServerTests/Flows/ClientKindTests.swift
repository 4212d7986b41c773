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

    @Test("an application that lists its journeys lets its clients start those only: a page with the sign-in app's web client cannot start adding a phone, and nothing is created")
    func applicationListsItsJourneys() async throws {
        try await TestServer.run(adjust: { $0.mode = .production }) { server in
            let created = try await server.admin(.POST, "applications", json: [
                "id": "bank", "name": "Bank", "allowed_journeys": ["web_login", "web_transaction_signing", "web_login"],
            ])
            #expect(created.status == .created)
            #expect(created.body["allowed_journeys"] == ["web_login", "web_transaction_signing"])
            for (id, kind) in [("bank-web", "web"), ("bank-app", "native")] {
                let client = try await server.admin(.POST, "applications/bank/clients", json: ["id": .string(id), "name": "C", "kind": .string(kind)])
                #expect(client.status == .created)
            }
            // The list holds for the application's native clients too.
            #expect(try await server.send(.POST, "/v1/journeys/mobile_login/start", json: ["client_id": "bank-app"]).status == .forbidden)

            let refused = try await server.send(.POST, "/v1/journeys/web_add_phone/start", json: ["client_id": "bank-web"])
            #expect(refused.status == .forbidden)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.journeyNotForClient))
            #expect(try await server.count("interactions") == 0)
            #expect(try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "bank-web"]).status == .ok)

            // A journey the server does not load, or that starts only from a push, cannot be listed; the list stays.
            for wrong in ["web_logn", "mobile_approve_otp"] {
                let listed = try await server.admin(.PATCH, "applications/bank", json: ["allowed_journeys": [.string(wrong)]])
                #expect(listed.status == .badRequest, "\(wrong)")
            }
            let shown = try await server.admin(.GET, "applications").body.arrayValue?.first { $0["id"] == "bank" }
            #expect(shown?["allowed_journeys"] == ["web_login", "web_transaction_signing"])

            // Named again, the list is replaced; a PATCH that does not name it leaves it; null lifts it.
            #expect(try await server.admin(.PATCH, "applications/bank", json: ["allowed_journeys": ["web_add_phone"]]).status == .ok)
            #expect(try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "bank-web"]).status == .forbidden)
            // An empty list lets them start none.
            #expect(try await server.admin(.PATCH, "applications/bank", json: ["allowed_journeys": []]).body["allowed_journeys"] == [])
            #expect(try await server.send(.POST, "/v1/journeys/web_add_phone/start", json: ["client_id": "bank-web"]).status == .forbidden)
            #expect(try await server.admin(.PATCH, "applications/bank", json: ["allowed_journeys": ["web_add_phone"]]).status == .ok)
            let renamed = try await server.admin(.PATCH, "applications/bank", json: ["name": "Bank plc"])
            #expect(renamed.body["allowed_journeys"] == ["web_add_phone"])
            let lifted = try await server.admin(.PATCH, "applications/bank", json: ["allowed_journeys": .null])
            #expect(lifted.status == .ok)
            #expect(lifted.body["allowed_journeys"] == nil)
            #expect(try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "bank-web"]).status == .ok)
            let events = try await server.admin(.GET, "security-events?kind=application_changed").body["security_events"]?.arrayValue ?? []
            #expect(events.contains { $0["detail"]?.stringValue?.contains("the journeys its clients may start set to [web_add_phone]") == true })
            #expect(events.contains { $0["detail"]?.stringValue?.contains("the journeys its clients may start: [web_login, web_transaction_signing]") == true })

            // A list that cannot be read is never taken for no list: the start fails, as the listing does.
            try await server.sql.raw("UPDATE applications SET allowed_journeys = 'web_login' WHERE id = 'bank'").run()
            #expect(try await server.send(.POST, "/v1/journeys/web_add_phone/start", json: ["client_id": "bank-web"]).status == .internalServerError)
            #expect(try await server.admin(.GET, "applications").status == .internalServerError)
        }
    }
}
