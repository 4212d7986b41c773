import Foundation
import NIOCore
import NIOHTTP1
import Testing

@Suite("The browser SDK and the demo web app are served by the server")
struct BrowserSDKTests {
    static let browserDirectory = TestServer.repositoryRoot.appendingPathComponent("Sources/CountersignServer/Browser")

    @Test("/sdk/countersign.js and its types are served as they are in the repository, to pages of any origin; other names are 404")
    func served() async throws {
        try await TestServer.run { server in
            for (name, type) in [("countersign.js", "text/javascript"), ("countersign.d.ts", "text/plain")] {
                let response = try await server.request(.GET, "/sdk/\(name)")
                #expect(response.status == .ok)
                #expect(response.headers.contentType?.description.hasPrefix(type) == true)
                #expect(Data(buffer: response.body) == (try Data(contentsOf: Self.browserDirectory.appendingPathComponent("sdk/\(name)"))))
            }
            #expect(try await server.request(.GET, "/sdk/../Package.swift").status == .notFound)
            // A relying party's page imports the SDK from here: a module script is fetched with CORS.
            let imported = try await server.send(.GET, "/sdk/countersign.js", headers: ["Origin": "https://bank.example"])
            #expect(imported.headers.first(name: .accessControlAllowOrigin) == "*")
            #expect(imported.headers.first(name: .accessControlAllowCredentials) == nil)
            let page = try await server.send(.GET, "/demo", headers: ["Origin": "https://bank.example"])
            #expect(page.headers.first(name: .accessControlAllowOrigin) == nil, "the demo is not for other origins")
            #expect(try await server.request(.GET, "/sdk/other.js").status == .notFound)
        }
    }

    @Test("/demo serves the demo app (development mode) under a policy that allows only its own scripts; / leads to it")
    func demo() async throws {
        try await TestServer.run { server in
            let page = try await server.request(.GET, "/demo")
            #expect(page.status == .ok)
            #expect(page.headers.contentType?.description.hasPrefix("text/html") == true)
            #expect(Data(buffer: page.body) == (try Data(contentsOf: Self.browserDirectory.appendingPathComponent("demo/index.html"))))
            let policy = try #require(page.headers.first(name: "Content-Security-Policy"))
            #expect(policy.contains("script-src 'self'"))
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(page.headers.first(name: "X-Content-Type-Options") == "nosniff")

            for (name, type) in [("demo.js", "text/javascript"), ("demo.css", "text/css")] {
                let response = try await server.request(.GET, "/demo/\(name)")
                #expect(response.status == .ok)
                #expect(response.headers.contentType?.description.hasPrefix(type) == true)
            }
            #expect(try await server.request(.GET, "/demo/secret.txt").status == .notFound)
            let root = try await server.request(.GET, "/")
            #expect(root.status == .seeOther)
            #expect(root.headers.first(name: .location) == "/demo")
        }
    }

    @Test("a production server serves the SDK but not the demo, which has no client to run with there")
    func noDemoInProduction() async throws {
        try await TestServer.run(adjust: { $0.mode = .production }) { (server: TestServer) async throws in
            #expect(try await server.request(.GET, "/sdk/countersign.js").status == .ok)
            for path in ["/demo", "/demo/demo.js", "/"] {
                #expect(try await server.request(.GET, path).status == .notFound, "\(path)")
            }
        }
    }
}
