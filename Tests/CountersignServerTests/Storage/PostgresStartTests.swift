import CountersignServer
import Foundation
import NIOCore
import NIOPosix
import Testing

@Suite("Starting on PostgreSQL")
struct PostgresStartTests {
    @Test("a database that cannot be reached stops the start with where and why")
    func unreachable() async throws {
        // A port nothing listens on: taken, then given back.
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(listener.localAddress?.port)
        try await listener.close()
        let error = await TestServer.startRefusal(database: "postgres://countersign:secret-password-0123@127.0.0.1:\(port)/countersign?sslmode=disable")
        #expect("\(error)".hasPrefix("PostgreSQL at 127.0.0.1:\(port) cannot be reached ("), "\(error)")
        #expect("\(error)".contains("refused"), "\(error)")
        #expect(!"\(error)".contains("secret-password-0123"))
    }

    @Test(
        "a database that refuses the server's password stops the start with PostgreSQL's reason, and not the password",
        .enabled(if: TestDatabase.postgresURL != nil))
    func refusedPassword() async throws {
        let url = try #require(TestDatabase.postgresURL.flatMap { URLComponents(string: $0) })
        try #require(url.user != nil)
        var wrong = url
        wrong.password = "not-the-password-0123"
        let error = await TestServer.startRefusal(database: try #require(wrong.string))
        #expect("\(error)".contains("refused the server: password authentication failed for user"), "\(error)")
        #expect("\(error)".contains("SQLSTATE 28P01"), "\(error)")
        #expect(!"\(error)".contains("not-the-password-0123"))
    }
}
