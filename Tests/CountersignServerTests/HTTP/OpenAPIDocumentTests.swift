import Foundation
import NIOCore
import NIOHTTP1
import Testing

@Suite("The OpenAPI contract")
struct OpenAPIDocumentTests {
    static let file = TestServer.repositoryRoot.appendingPathComponent("Sources/CountersignServer/HTTP/OpenAPI/openapi.json")

    @Test("/openapi.json serves the repository's document, and the document names exactly the operations the server routes")
    func documentMatchesRoutes() async throws {
        try await TestServer.run { server in
            let served = try await server.request(.GET, "/openapi.json")
            #expect(served.status == .ok)
            #expect(served.headers.first(name: "Content-Type") == "application/json; charset=utf-8")
            let text = try String(contentsOf: Self.file, encoding: .utf8)
            #expect(served.body.string == text)

            let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            let methods: Set = ["get", "put", "post", "patch", "delete"]
            let documented = Set(paths.flatMap { path, item in
                item.keys.filter(methods.contains).map { "\($0.uppercased()) \(Self.shape(path))" }
            })
            // Everything but the browser files (the SDK, the demo and the redirect to it, the console's page and modules).
            let routed = Set(server.app.routes.map { route in
                let parts = route.split(separator: " ", maxSplits: 1)
                return "\(parts[0]) \(Self.shape(String(parts[1])))"
            }.filter { !$0.contains(" /sdk/") && !$0.contains(" /demo") && !$0.hasSuffix(" /") && !$0.hasSuffix(" /console") && !$0.hasSuffix(" /console/{}") })
            #expect(routed.contains("POST /v1/journeys/{}/start") && routed.contains("PATCH /admin/v1/applications/{}"))
            #expect(routed.subtracting(documented).isEmpty, "routed but not in the contract")
            #expect(documented.subtracting(routed).isEmpty, "in the contract but not routed")
        }
    }

    /// A path with every parameter written `{}`: `/v1/interactions/{interactionID}/submit` and
    /// `/v1/interactions/{interaction_id}/submit` are the same operation.
    private static func shape(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("{") ? "{}" : String($0) }.joined(separator: "/")
    }
}
