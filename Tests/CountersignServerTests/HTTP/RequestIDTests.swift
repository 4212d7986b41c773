@testable import CountersignServer
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Testing

@Suite("Request ids")
struct RequestIDTests {
    @Test("a request's line gives its duration in milliseconds rounded to one decimal", arguments: [
        (Duration.zero, "0.0"), (.microseconds(49), "0.0"), (.microseconds(51), "0.1"), (.microseconds(150), "0.2"),
        (.microseconds(300), "0.3"), (.milliseconds(12), "12.0"), (.microseconds(1_234_567), "1234.6"), (.seconds(75), "75000.0"),
    ])
    func durations(duration: Duration, logged: String) {
        #expect(RequestLogMiddleware.milliseconds(duration) == logged)
    }

    @Test("a caller's X-Request-Id is kept when it is a short token and replaced otherwise, in the answer and in the log", arguments: [
        String(repeating: "a", count: 200), String(repeating: "a", count: 65), "two words", "id\u{7}bell", "ünïcode",
    ])
    func requestIDs(forged: String) async throws {
        let store = LogStore()
        try await TestServer.run(logger: Logger(label: "countersign.tests") { _ in CapturingLogHandler(store: store) }) { server in
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
