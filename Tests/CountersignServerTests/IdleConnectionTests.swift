import CountersignServer
import Foundation
import Testing

@Suite("Silent connections are closed")
struct IdleConnectionTests {
    /// Connects to `port`, sends `bytes`, then waits up to `seconds` for the server to close the
    /// connection; returns whether it did.
    static func serverCloses(port: Int, after bytes: String, within seconds: Int) throws -> Bool {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { return false }
        _ = bytes.withCString { send(socket, $0, strlen($0), 0) }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 64)
        return recv(socket, &buffer, buffer.count, 0) == 0
    }

    @Test("a connection that sends nothing, or stops halfway through its headers, is closed after the idle timeout", arguments: [
        "", "GET /healthz HTTP/1.1\r\nHost: countersign\r\n",
    ])
    func silentConnections(sent: String) async throws {
        try await TestServer.run(adjust: { $0.idleTimeout = 1 }) { server in try await server.listening { port in
            let closed = try await Task.detached { try Self.serverCloses(port: port, after: sent, within: 10) }.value
            #expect(closed)
        } }
    }
}
