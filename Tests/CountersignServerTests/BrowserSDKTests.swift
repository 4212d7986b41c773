import Foundation
import Testing
import Vapor

@Suite("The browser SDK is served by the server")
struct BrowserSDKTests {
    static let sdkDirectory = TestServer.repositoryRoot.appendingPathComponent("Sources/CountersignServer/Browser/sdk")

    @Test("/sdk/countersign.js and its types are served as they are in the repository; other names are 404")
    func served() async throws {
        try await TestServer.run { server in
            for (name, type) in [("countersign.js", "text/javascript"), ("countersign.d.ts", "text/plain")] {
                let response = try await server.app.testing().sendRequest(.GET, "/sdk/\(name)")
                #expect(response.status == .ok)
                #expect(response.headers.contentType?.description.hasPrefix(type) == true)
                #expect(Data(buffer: response.body) == (try Data(contentsOf: Self.sdkDirectory.appendingPathComponent(name))))
            }
            #expect(try await server.app.testing().sendRequest(.GET, "/sdk/../Package.swift").status == .notFound)
            #expect(try await server.app.testing().sendRequest(.GET, "/sdk/other.js").status == .notFound)
        }
    }
}
