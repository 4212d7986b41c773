import CountersignCore
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Strict input on /v1: one reading of every body")
struct StrictInputTests {
    @Test("approval data naming the amount twice is refused before anything is signed or stored")
    func duplicateAmount() async throws {
        try await TestServer.run { server in
            // JSONDecoder would sign the first amount; a JavaScript backend would pay the second.
            let body = #"{"client_id":"demo-native","additional_params":{"external_user_id":"ada"},"approval_data":{"amount":"1","amount":"1000","currency":"EUR"}}"#
            let refused = try await server.send(.POST, "/v1/journeys/mobile_transaction_signing/start", rawBody: body)
            #expect(refused.status == .badRequest)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            #expect(refused.body["error"]?["message"]?.stringValue?.contains("'amount'") == true)
            let sql = server.sql
            #expect(try await sql.raw("SELECT id FROM interactions").all().isEmpty)
        }
    }

    @Test("a submit repeating a key, even spelled with an escape, is refused and changes nothing", arguments: [
        #"{"option":"client_input","data":{"email":"ada@example.com","email":"eve@example.com"}}"#,
        #"{"option":"client_input","option":"cancel","data":{"email":"ada@example.com"}}"#,
        #"{"option":"client_input","data":{"email":"ada@example.com","\u0065mail":"eve@example.com"}}"#,
    ])
    func duplicateInSubmit(body: String) async throws {
        try await TestServer.run { server in
            let started = try await server.send(.POST, "/v1/journeys/web_login_biometric_only/start", json: ["client_id": "demo-web"])
            let id = try #require(started.body["interaction_id"]?.stringValue)
            let token = try #require(started.body["interaction_token"]?.stringValue)
            let refused = try await server.send(.POST, "/v1/interactions/\(id)/submit", rawBody: body, bearer: token)
            #expect(refused.status == .badRequest)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            // The same key in different objects is no repetition, and the token still answers.
            let cancelled = try await server.send(
                .POST, "/v1/interactions/\(id)/submit", rawBody: #"{"option":"cancel","data":{"option":"x"}}"#, bearer: token)
            #expect(cancelled.status == .ok)
        }
    }

    /// Nested arrays cost seconds to decode when each level tried every JSON type in turn: a stranger's
    /// 1 KB start stalled the server.
    @Test("a start nesting 500 arrays deep, or one with 15 such branches, is refused before it is decoded", arguments: [1, 15])
    func deeplyNested(branches: Int) async throws {
        let branch = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        let members = (0..<branches).map { #""x\#($0)":\#(branch)"# }.joined(separator: ",")
        try await TestServer.run { server in
            let refused = try await server.send(
                .POST, "/v1/journeys/web_login/start", rawBody: #"{"client_id":"nope","additional_params":{\#(members)}}"#)
            #expect(refused.status == .badRequest)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            #expect(refused.body["error"]?["message"]?.stringValue?.contains("nest more than 16 deep") == true)
            #expect(try await server.count("interactions") == 0)
        }
    }

    @Test("free-form values nested as deep as a request may are decoded whole; a body of more values than any needs is refused")
    func nestedWithinBounds() async throws {
        // The body and additional_params are two levels; fourteen more make the sixteen allowed.
        let deep = String(repeating: "[", count: 13) + #"{"k":"v"}"# + String(repeating: "]", count: 13)
        try await TestServer.run { server in
            let started = try await server.send(
                .POST, "/v1/journeys/web_login_biometric_only/start",
                rawBody: #"{"client_id":"demo-web","additional_params":{"deep":\#(deep)}}"#)
            #expect(started.status == .ok)
            let many = Array(repeating: "[]", count: 300).joined(separator: ",")
            let refused = try await server.send(
                .POST, "/v1/journeys/web_login_biometric_only/start", rawBody: #"{"client_id":"demo-web","additional_params":{"x":[\#(many)]}}"#)
            #expect(refused.status == .badRequest)
            #expect(refused.body["error"]?["message"]?.stringValue?.contains("more than 256 values") == true)
        }
    }

    @Test("a trailing comma is refused on /v1 and the admin API", arguments: [
        ("/v1/journeys/web_login_biometric_only/start", #"{"client_id":"demo-web",}"#),
        ("/v1/journeys/web_login_biometric_only/start", #"{"client_id":"demo-web","additional_params":{"a":[1,]}}"#),
        ("/admin/v1/applications", #"{"name":"Shop",}"#),
    ])
    func trailingComma(path: String, body: String) async throws {
        try await TestServer.run { server in
            let applications = try await server.count("applications")
            let refused = try await server.send(.POST, path, rawBody: body, bearer: path.hasPrefix("/admin") ? TestServer.adminKey : nil)
            #expect(refused.status == .badRequest)
            #expect(refused.body["error"]?["message"]?.stringValue?.contains("a comma has no value after it") == true)
            #expect(try await server.count("interactions") == 0)
            #expect(try await server.count("applications") == applications)
        }
    }

    @Test("the phone's mobile approve start is held to the same rules as every /v1 body", arguments: [
        (#"{"client_id":"demo-native","client_id":"demo-web"}"#, "application/json", 400),
        (#"{"client_id":"demo-native"}"#, "text/plain", 415),
    ])
    func mobileApproveStart(body: String, contentType: String, status: Int) async throws {
        try await TestServer.run { server in
            let refused = try await server.send(.POST, "/v1/mobile-approve/start", rawBody: body, contentType: contentType)
            #expect(refused.status.code == UInt(status))
            #expect(refused.body["error"]?["code"] == .string(status == 415 ? ErrorCode.unsupportedMediaType : ErrorCode.clientResponseNotValid))
            if status == 400 { #expect(refused.body["error"]?["message"]?.stringValue?.contains("'client_id' appears twice") == true) }
            #expect(try await server.count("interactions") == 0)
        }
    }

    @Test("a body not declared application/json in UTF-8 is 415 unsupported_media_type", arguments: [
        "text/plain", "application/x-www-form-urlencoded", "application/json; charset=iso-8859-1", nil,
    ] as [String?])
    func mediaType(contentType: String?) async throws {
        try await TestServer.run { server in
            let refused = try await server.send(
                .POST, "/v1/journeys/web_login_biometric_only/start", rawBody: #"{"client_id":"demo-web"}"#, contentType: contentType)
            #expect(refused.status == .unsupportedMediaType)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.unsupportedMediaType))
            for declared in ["application/json; charset=UTF-8", "Application/JSON"] {
                let accepted = try await server.send(
                    .POST, "/v1/journeys/web_login_biometric_only/start", rawBody: #"{"client_id":"demo-web"}"#, contentType: declared)
                #expect(accepted.status == .ok, "\(declared)")
            }
        }
    }

    @Test("a body over 16 KiB is 413 http_413, in process and on a real port, on /v1 and the admin API, and nothing is created")
    func bodyOverTheLimit() async throws {
        let padding = String(repeating: "x", count: 17 * 1024)
        let start = #"{"client_id":"demo-web","additional_params":{"pad":"\#(padding)"}}"#
        let application = #"{"id":"big","name":"\#(padding)"}"#
        try await TestServer.run { server in
            for (path, body) in [("/v1/journeys/web_login/start", start), ("/admin/v1/applications", application)] {
                let refused = try await server.send(.POST, path, rawBody: body, bearer: TestServer.adminKey)
                #expect(refused.status == .payloadTooLarge, "\(path)")
                #expect(refused.body["error"]?["code"] == "http_413", "\(path)")
            }
            try await server.listening { port in
                for (path, body) in [("/v1/journeys/web_login/start", start), ("/admin/v1/applications", application)] {
                    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
                    request.httpMethod = "POST"
                    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                    request.setValue("Bearer \(TestServer.adminKey)", forHTTPHeaderField: "Authorization")
                    request.httpBody = Data(body.utf8)
                    let (answer, response) = try await URLSession.shared.data(for: request)
                    #expect((response as? HTTPURLResponse)?.statusCode == 413, "\(path)")
                    #expect(try JSONDecoder().decode(JSONValue.self, from: answer)["error"]?["code"] == "http_413", "\(path)")
                }
            }
            #expect(try await server.count("interactions") == 0)
            #expect(try await server.admin(.GET, "applications").body.arrayValue?.contains { $0["id"] == "big" } == false)
        }
    }

    @Test("a compressed body is 415 unsupported_media_type on a real port, inflated by nothing, and nothing is created")
    func compressedBody() async throws {
        // {"client_id":"demo-web"}, gzipped.
        let gzipped = Data(base64Encoded: "H4sIAAAAAAAAA6tWSs7JTM0ric9MUbJSSknNzdctT01SqgUA3MBo9xgAAAA=")!
        try await TestServer.run { server in try await server.listening { port in
            for coding in ["gzip", "deflate", "br"] {
                var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/journeys/web_login_biometric_only/start")!)
                request.httpMethod = "POST"
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.setValue(coding, forHTTPHeaderField: "Content-Encoding")
                request.httpBody = gzipped
                let (body, response) = try await URLSession.shared.data(for: request)
                #expect((response as? HTTPURLResponse)?.statusCode == 415, "\(coding)")
                #expect(try JSONDecoder().decode(JSONValue.self, from: body)["error"]?["code"] == .string(ErrorCode.unsupportedMediaType))
            }
            #expect(try await server.count("interactions") == 0)
        } }
    }

    @Test("the admin API is held to the same rules: a form body is 415, a repeated key or an empty body 400, and nothing is created")
    func adminBodies() async throws {
        try await TestServer.run { server in
            let form = try await server.send(
                .POST, "/admin/v1/applications", rawBody: "id=formapp&name=Form", contentType: "application/x-www-form-urlencoded",
                bearer: TestServer.adminKey)
            #expect(form.status == .unsupportedMediaType)
            #expect(form.body["error"]?["code"] == .string(ErrorCode.unsupportedMediaType))
            let twice = try await server.send(
                .POST, "/admin/v1/applications", rawBody: #"{"id": "twice", "name": "X", "name": "Y"}"#, bearer: TestServer.adminKey)
            #expect(twice.status == .badRequest)
            #expect(twice.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            for path in ["/admin/v1/applications", "/admin/v1/enrollment-codes"] {
                let empty = try await server.send(.POST, path, rawBody: "", bearer: TestServer.adminKey)
                #expect(empty.status == .badRequest, "\(path)")
                #expect(empty.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid), "\(path)")
            }
            let applications = try #require(try await server.admin(.GET, "applications").body.arrayValue)
            #expect(!applications.contains { $0["id"] == "formapp" || $0["id"] == "twice" })
            let tooShort = try await server.admin(.POST, "enrollment-codes", json: ["external_user_id": "ada@example.com", "client_id": "demo-native", "expires_in": .number(0.5)])
            #expect(tooShort.status == .badRequest)
            // An action without a body needs no type.
            let rotated = try await server.send(.POST, "/admin/v1/signing-keys/rotate", contentType: nil, bearer: TestServer.adminKey)
            #expect(rotated.status.code < 300)
        }
    }

    @Test("text holding the NUL character, in a body or a query, is 400 on /v1 and the admin API (PostgreSQL stores no such text), and a path with one names nothing (404); nothing is created; an escaped backslash before u0000 is no NUL")
    func nulCharacter() async throws {
        try await TestServer.run { server in
            let start = try await server.send(.POST, "/v1/journeys/web_login_biometric_only/start", rawBody: #"{"client_id":"demo-web\u0000"}"#)
            let named = try await server.send(.POST, "/admin/v1/applications", rawBody: #"{"id":"nul","name":"A\u0000B"}"#, bearer: TestServer.adminKey)
            let events = try await server.send(.GET, "/admin/v1/security-events?user_id=a%00", bearer: TestServer.adminKey)
            for refused in [start, named, events] {
                #expect(refused.status == .badRequest)
                #expect(refused.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            }
            let user = try await server.send(.GET, "/admin/v1/users/%00", bearer: TestServer.adminKey)
            let inbox = try await server.send(.GET, "/v1/devices/dev%00/pending")
            for unknown in [user, inbox] {
                #expect(unknown.status == .notFound)
                #expect(unknown.body["error"]?["code"] == .string(ErrorCode.notFound))
            }
            #expect(try await server.count("interactions") == 0)
            #expect(try #require(try await server.admin(.GET, "applications").body.arrayValue).allSatisfy { $0["id"] != "nul" })
            // A backslash, escaped, then the letters u0000: text without NUL.
            let backslash = try await server.send(
                .POST, "/admin/v1/applications", rawBody: #"{"id":"slash","name":"A\\u0000B"}"#, bearer: TestServer.adminKey)
            #expect(backslash.status == .created)
            #expect(backslash.body["name"] == #"A\u0000B"#)
        }
    }

    @Test("bytes that are not UTF-8, or a byte order mark, are refused", arguments: [
        Array(#"{"client_id":"demo-"#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8),
        [0xEF, 0xBB, 0xBF] + Array(#"{"client_id":"demo-web"}"#.utf8),
    ])
    func notUTF8(bytes: [UInt8]) async throws {
        try await TestServer.run { server in
            let refused = try await server.send(.POST, "/v1/journeys/web_login_biometric_only/start", bytes: bytes)
            #expect(refused.status == .badRequest)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            // Refused for its encoding, before any decoder read it.
            #expect(refused.body["error"]?["message"]?.stringValue?.contains("UTF-8") == true)
        }
    }
}
