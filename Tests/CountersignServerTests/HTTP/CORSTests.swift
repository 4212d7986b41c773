import CountersignCore
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Pages of the relying party's own origin call the API: CORS per application (admin `allowed_origins`).
@Suite("CORS for the relying party's own origin")
struct CORSTests {
    static let bank = "https://bank.example"

    /// Starts `web_login` through the demo web client with `headers` (a page's `Origin`, the `Host` it called).
    static func start(_ server: TestServer, headers: HTTPHeaders = [:]) async throws -> (status: HTTPStatus, body: JSONValue, headers: HTTPHeaders) {
        try await server.send(.POST, "/v1/journeys/web_login/start", json: ["client_id": "demo-web"], headers: headers)
    }

    /// Lets the demo application's pages be on the bank's origin.
    static func listBank(_ server: TestServer) async throws {
        #expect(try await server.admin(.PATCH, "applications/demo", json: ["allowed_origins": .array([.string(bank)])]).status == .ok)
    }

    @Test("a preflight from an origin an application lists is answered with what the page may send; from another, 403 without CORS headers")
    func preflight() async throws {
        try await TestServer.run { server in
            try await Self.listBank(server)
            // As browsers ask: POST for the calls, GET for the events stream.
            for (method, path) in [("POST", "/v1/journeys/web_login/start"), ("POST", "/v1/interactions/int_x/submit"), ("GET", "/v1/interactions/int_x/events")] {
                var headers: HTTPHeaders = ["Access-Control-Request-Method": method, "Access-Control-Request-Headers": "authorization, content-type"]
                headers.add(name: "Origin", value: Self.bank)
                let allowed = try await server.send(.OPTIONS, path, headers: headers)
                #expect(allowed.status == .noContent)
                #expect(allowed.headers.first(name: .accessControlAllowOrigin) == Self.bank)
                #expect(allowed.headers.first(name: .accessControlAllowMethods) == "GET, POST")
                #expect(allowed.headers.first(name: .accessControlAllowHeaders) == "Authorization, Content-Type, Countersign-Browser-Credential")
                #expect(allowed.headers.first(name: .accessControlAllowCredentials) == nil)

                headers.replaceOrAdd(name: "Origin", value: "https://evil.example")
                let refused = try await server.send(.OPTIONS, path, headers: headers)
                #expect(refused.status == .forbidden)
                #expect(refused.body["error"]?["code"] == .string(ErrorCode.originNotAllowed))
                #expect(refused.headers.first(name: .accessControlAllowOrigin) == nil)
            }
        }
    }

    @Test("a journey starts from a listed origin with its answer readable; from an origin the client's application does not list it is refused and nothing is stored")
    func startsPerApplication() async throws {
        try await TestServer.run { server in
            try await Self.listBank(server)
            #expect(try await server.admin(.POST, "applications", json: [
                "id": "shop", "name": "Shop", "allowed_origins": ["https://shop.example"],
            ]).status == .created)

            let started = try await Self.start(server, headers: [
                "Origin": Self.bank,
            ])
            #expect(started.status == .ok)
            #expect(started.headers.first(name: .accessControlAllowOrigin) == Self.bank)
            #expect(started.headers.first(name: .accessControlExposeHeaders) == "Retry-After, X-Request-Id")
            #expect(started.headers["Vary"].contains("Origin"))
            let stored = try #require(try await server.stats()["interactions_stored"])

            // Listed, but by another application than demo-web's: the shop's pages cannot use the bank's client.
            let otherApplication = try await Self.start(server, headers: [
                "Origin": "https://shop.example",
            ])
            #expect(otherApplication.status == .forbidden)
            #expect(otherApplication.body["error"]?["code"] == .string(ErrorCode.originNotAllowed))
            let unlisted = try await Self.start(server, headers: [
                "Origin": "https://evil.example",
            ])
            #expect(unlisted.status == .forbidden)
            #expect(unlisted.headers.first(name: .accessControlAllowOrigin) == nil)
            #expect(try await server.stats()["interactions_stored"] == stored)
        }
    }

    @Test("pages of the server's own origin and callers without an Origin get no CORS headers and are not limited by the list")
    func sameOrigin() async throws {
        try await TestServer.run { server in
            try await Self.listBank(server)
            let ownPage = try await Self.start(server, headers: [
                "Origin": "http://auth.bank.example:8080", "Host": "auth.bank.example:8080",
            ])
            #expect(ownPage.status == .ok)
            #expect(ownPage.headers.first(name: .accessControlAllowOrigin) == nil)
            let noBrowser = try await Self.start(server)
            #expect(noBrowser.status == .ok)
            #expect(noBrowser.headers.first(name: .accessControlAllowOrigin) == nil)
        }
    }

    @Test("a page at the server's public URL is its own, though the proxy in front passed on another Host")
    func publicURLIsOwnOrigin() async throws {
        try await TestServer.run { server in
            try await Self.listBank(server)
            let behindProxy = try await Self.start(server, headers: [
                "Origin": TestServer.issuer, "Host": "127.0.0.1:8081",
            ])
            #expect(behindProxy.status == .ok)
            #expect(behindProxy.headers.first(name: .accessControlAllowOrigin) == nil)
            // As a browser may write it: upper case, the default port named.
            let written = try await Self.start(server, headers: [
                "Origin": "HTTP://COUNTERSIGN.TEST:80", "Host": "127.0.0.1:8081",
            ])
            #expect(written.status == .ok)
            // Another port of the same host is another origin.
            let elsewhere = try await Self.start(server, headers: [
                "Origin": "http://countersign.test:8443", "Host": "127.0.0.1:8081",
            ])
            #expect(elsewhere.status == .forbidden)
            #expect(elsewhere.body["error"]?["code"] == .string(ErrorCode.originNotAllowed))
        }
    }

    @Test("in production a page under any name that resolves to the server (DNS rebinding) is another origin: the Host it names proves nothing")
    func dnsRebinding() async throws {
        try await TestServer.run(adjust: { $0.mode = .production }) { server in
            #expect(try await server.admin(.POST, "applications", json: ["id": "bank", "name": "Bank"]).status == .created)
            #expect(try await server.admin(.POST, "applications/bank/clients", json: ["id": "bank-web", "name": "Web", "kind": "web"]).status == .created)
            let rebound = try await server.send(
                .POST, "/v1/journeys/web_login/start", json: ["client_id": "bank-web"],
                headers: ["Origin": "http://attacker.example", "Host": "attacker.example"])
            #expect(rebound.status == .forbidden)
            #expect(rebound.body["error"]?["code"] == .string(ErrorCode.originNotAllowed))
            let own = try await server.send(
                .POST, "/v1/journeys/web_login/start", json: ["client_id": "bank-web"],
                headers: HTTPHeaders([("Origin", TestServer.issuer), ("Host", "attacker.example")]))
            #expect(own.status == .ok)
        }
    }

    @Test("in development a page on the Host the request named is the server's own only over the public URL's scheme")
    func hostNamesNoScheme() async throws {
        try await TestServer.run { server in
            try await Self.listBank(server)
            // The public URL is http://countersign.test: a page over https on the same Host is another origin
            // (as a page over plain http is beside an https server, where a network attacker can put one).
            let otherScheme = try await Self.start(server, headers: [
                "Origin": "https://auth.bank.example", "Host": "auth.bank.example",
            ])
            #expect(otherScheme.status == .forbidden)
            #expect(otherScheme.body["error"]?["code"] == .string(ErrorCode.originNotAllowed))
            let sameScheme = try await Self.start(server, headers: [
                "Origin": "http://auth.bank.example", "Host": "auth.bank.example",
            ])
            #expect(sameScheme.status == .ok)
        }
    }

    @Test("discovery and the JWKS are readable from any page, as browser OpenID libraries read them")
    func publicDocuments() async throws {
        try await TestServer.run { server in
            for path in ["/.well-known/openid-configuration", "/.well-known/jwks.json"] {
                let answer = try await server.send(.GET, path, headers: ["Origin": "https://anywhere.example"])
                #expect(answer.status == .ok)
                #expect(answer.headers.first(name: .accessControlAllowOrigin) == "*")
                #expect(answer.headers.first(name: .accessControlAllowCredentials) == nil)
            }
        }
    }

    @Test("the admin API refuses what is not an origin and stores nothing of it", arguments: [
        "*", "https://*.bank.example", "https://bank.example/app", "https://bank.example?x=1", "ftp://bank.example", "bank.example",
        "https://user@bank.example", "null", "http://bank.example:99999", "http://bank.example:0", "http://é.example", "http://%41",
    ])
    func adminRefusesNonOrigins(notAnOrigin: String) async throws {
        try await TestServer.run { server in
            let refused = try await server.admin(.PATCH, "applications/demo", json: ["allowed_origins": .array([.string(notAnOrigin)])])
            #expect(refused.status == .badRequest)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.clientResponseNotValid))
            #expect(try await server.admin(.POST, "applications", json: [
                "id": "shop", "name": "Shop", "allowed_origins": .array([.string(notAnOrigin)]),
            ]).status == .badRequest)
            #expect(try await server.admin(.GET, "applications").body.arrayValue?.contains { $0["id"] == "shop" } == false, "nothing half-written")
            let demo = try await server.admin(.GET, "applications").body.arrayValue?.first { $0["id"] == "demo" }
            #expect(demo?["allowed_origins"] == [], "nothing stored")
        }
    }

    @Test("the admin API keeps origins as browsers send them, changes only what a PATCH names, and answers 404 for an unknown application")
    func adminKeepsOrigins() async throws {
        try await TestServer.run { server in
            let set = try await server.admin(.PATCH, "applications/demo", json: [
                "allowed_origins": ["HTTPS://Bank.Example:443", "http://localhost:3000", "https://bank.example"],
            ])
            #expect(set.status == .ok)
            #expect(set.body["allowed_origins"] == ["http://localhost:3000", "https://bank.example"])
            let listed = try await server.admin(.GET, "applications").body.arrayValue?.first { $0["id"] == "demo" }
            #expect(listed?["allowed_origins"] == ["http://localhost:3000", "https://bank.example"])
            let renamed = try await server.admin(.PATCH, "applications/demo", json: ["name": "Demo bank"])
            #expect(renamed.body["name"] == "Demo bank")
            let stored = try await server.admin(.GET, "applications").body.arrayValue?.first { $0["id"] == "demo" }
            #expect(stored?["name"] == "Demo bank", "the new name is kept, not only answered")
            #expect(renamed.body["allowed_origins"] == ["http://localhost:3000", "https://bank.example"], "origins the body does not name stay")
            #expect(try await server.admin(.PATCH, "applications/nope", json: ["allowed_origins": []]).status == .notFound)
        }
    }
}
