import Foundation
import Logging
import Testing
import Vapor

@Suite("Request ids")
struct RequestIDTests {
    @Test("a caller's X-Request-Id is kept when it is a short token and replaced otherwise, in the answer and in the log", arguments: [
        String(repeating: "a", count: 200), String(repeating: "a", count: 65), "two words", "id\u{7}bell", "ünïcode",
    ])
    func requestIDs(forged: String) async throws {
        let store = LogStore()
        try await TestServer.run(prepare: { app in app.logger = Logger(label: "countersign.tests") { _ in CapturingLogHandler(store: store) } }) { server in
            let kept = try await server.send(.GET, "/healthz", headers: ["X-Request-Id": "proxy-1f2e.3:4_5"])
            #expect(kept.headers.first(name: "X-Request-Id") == "proxy-1f2e.3:4_5")
            let longest = String(repeating: "b", count: 64)
            #expect(try await server.send(.GET, "/healthz", headers: ["X-Request-Id": longest]).headers.first(name: "X-Request-Id") == longest)

            let replaced = try await server.send(.GET, "/healthz", headers: ["X-Request-Id": forged])
            let fresh = try #require(replaced.headers.first(name: "X-Request-Id"))
            #expect(fresh != forged && UUID(uuidString: fresh) != nil)
            let lines = store.lines.withLock { $0 }
            #expect(lines.contains { $0.contains("proxy-1f2e.3:4_5") })
            #expect(lines.contains { $0.contains(fresh) })
            #expect(!lines.contains { $0.contains(forged) })
        }
    }
}
