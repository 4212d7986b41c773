import CountersignServer
import Foundation
import Testing

@Suite("Silent, slow and oversized request heads")
struct RequestHeadTests {
    /// A TCP connection to the server on `port`, spoken to byte by byte as an attacker would.
    final class RawConnection {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)

        init(port: Int) throws {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            try #require(connected)
        }

        deinit { close(socket) }

        /// Sends `text`; false once the server has closed the connection.
        @discardableResult
        func send(_ text: String) -> Bool {
            text.withCString { Foundation.send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) } >= 0
        }

        /// What the server sends within `seconds`: nil once it has closed the connection without a word,
        /// empty when it said nothing in that time.
        func receive(within seconds: Double) -> String? {
            var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(socket, &buffer, buffer.count, 0)
            if count == 0 { return nil }
            return count < 0 ? "" : String(decoding: buffer[..<count], as: UTF8.self)
        }
    }

    @Test("a connection that sends nothing, or stops halfway through its headers, is closed after the idle timeout", arguments: [
        "", "GET /healthz HTTP/1.1\r\nHost: countersign\r\n",
    ])
    func silentConnections(sent: String) async throws {
        try await TestServer.run(adjust: { $0.idleTimeout = 1 }) { server in try await server.listening { port in
            let closed = try await Task.detached {
                let connection = try RawConnection(port: port)
                connection.send(sent)
                return connection.receive(within: 10) == nil
            }.value
            #expect(closed)
        } }
    }

    @Test("a request head sent a byte at a time, never silent for long, is cut off at the header read timeout")
    func slowHeaders() async throws {
        try await TestServer.run(adjust: { $0.headerReadTimeout = 1 }) { server in try await server.listening { port in
            let bytesSent = try await Task.detached {
                let connection = try RawConnection(port: port)
                var sent = 0
                guard connection.send("GET /healthz HTTP/1.1\r\nHost: countersign\r\nX-Slow: ") else { return sent }
                // Well within the idle timeout (60 s) between bytes; 20 s in all, if the server let it.
                while sent < 100 {
                    if connection.receive(within: 0.2) == nil || !connection.send("a") { return sent }
                    sent += 1
                }
                return sent
            }.value
            #expect(bytesSent < 100, "the server still read the head after 20 s")
        } }
    }

    @Test("a complete request within the limits is answered, and the connection serves the next one after the header read timeout")
    func headWithinLimits() async throws {
        try await TestServer.run(adjust: { $0.headerReadTimeout = 1 }) { server in try await server.listening { port in
            let answered = try await Task.detached {
                let connection = try RawConnection(port: port)
                let request = "GET /healthz?\(String(repeating: "q", count: 4000)) HTTP/1.1\r\nHost: countersign\r\nX-Fill: \(String(repeating: "f", count: 8000))\r\n\r\n"
                connection.send(request)
                var text = connection.receive(within: 10) ?? ""
                // Idle between requests (not in the middle of a head) is the idle timeout's to judge.
                try await Task.sleep(for: .seconds(2))
                connection.send(request)
                for _ in 0..<50 where text.components(separatedBy: "HTTP/1.1 200").count < 3 {
                    guard let more = connection.receive(within: 0.2) else { break }
                    text += more
                }
                return text
            }.value
            #expect(answered.components(separatedBy: "HTTP/1.1 200").count == 3, "\(answered)")
        } }
    }

    @Test("a request target over 8 KiB is answered 414, header fields over 16 KiB 431, and the connection is closed")
    func oversizedHeads() async throws {
        try await TestServer.run { server in try await server.listening { port in
            let answers = try await Task.detached {
                var answers: [String?] = []
                for request in [
                    "GET /healthz?\(String(repeating: "q", count: 9000)) HTTP/1.1\r\nHost: countersign\r\n\r\n",
                    "GET /healthz HTTP/1.1\r\nHost: countersign\r\nX-Fill: \(String(repeating: "f", count: 20000))\r\n\r\n",
                    "GET /healthz HTTP/1.1\r\nHost: countersign\r\n" + String(repeating: "X-Many: \(String(repeating: "m", count: 100))\r\n", count: 200) + "\r\n",
                ] {
                    let connection = try RawConnection(port: port)
                    connection.send(request)
                    answers.append(connection.receive(within: 10))
                    answers.append(connection.receive(within: 10))
                }
                return answers
            }.value
            #expect(answers[0]?.hasPrefix("HTTP/1.1 414") == true, "\(String(describing: answers[0]))")
            #expect(answers[2]?.hasPrefix("HTTP/1.1 431") == true, "\(String(describing: answers[2]))")
            #expect(answers[4]?.hasPrefix("HTTP/1.1 431") == true, "\(String(describing: answers[4]))")
            #expect(answers[1] == nil && answers[3] == nil && answers[5] == nil, "each connection is closed after its refusal")
        } }
    }
}
