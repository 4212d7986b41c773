import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("countersign serve under a slow-loris attack")
struct SlowConnectionsTests {
    /// A connection that sends a request head a line at a time and never finishes it.
    struct SlowClient {
        let socket: Int32

        init(port: Int) throws {
            socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard socket >= 0 else { throw Failure("socket: errno \(errno)") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else { throw Failure("connect: errno \(errno)") }
            send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        }

        func send(_ text: String) {
            _ = text.utf8CString.withUnsafeBufferPointer { Foundation.send(socket, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL)) }
        }

        /// How a trickled request head ended.
        enum TrickleOutcome: Equatable {
            /// The other side closed the connection without a byte of answer.
            case cutOff
            /// Bytes of an answer came back.
            case answered
            /// Still open when the trickling stopped.
            case stillOpen
        }

        /// Goes on sending a header line every half second for up to `seconds`.
        func trickle(for seconds: Int) -> TrickleOutcome {
            for _ in 0..<(seconds * 2) {
                send("X-Still-Typing: 1\r\n")
                var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                if poll(&descriptor, 1, 500) > 0 {
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    return recv(socket, &buffer, buffer.count, 0) > 0 ? .answered : .cutOff
                }
            }
            return .stillOpen
        }

        func close() { _ = Foundation.close(socket) }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test("1,100 connections trickling unfinished headers leave /healthz answered, on a system that starts a process at 1,024 open files")
    func slowLoris() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loris-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let server = try await RunningServer(
            directory: directory, environment: ["COUNTERSIGN_JOURNEYS_DIR": ProductionModeTests.templates], openFilesSoftLimit: 1024)
        defer { server.stop() }

        var attackers: [SlowClient] = []
        defer { attackers.forEach { $0.close() } }
        for _ in 0..<1100 { attackers.append(try SlowClient(port: server.port)) }
        attackers.forEach { $0.send("X-Still-Typing: 1\r\n") }

        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/healthz")!)
        request.timeoutInterval = 10
        let (body, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: body, as: UTF8.self).contains("ok"))
    }
}
