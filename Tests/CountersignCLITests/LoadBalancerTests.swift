import CountersignClient
import CountersignCore
import Foundation
import SimulatedPhone
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The deployment docs/DEPLOYMENT.md describes, run as written: nginx from the system's packages, with the
/// repository's `deploy/nginx-countersign.conf`, round-robin over two instances on one PostgreSQL database.
@Suite("Behind nginx", .serialized, .enabled(if: Instances.postgresURL != nil))
struct LoadBalancerTests {
    @Test("the demo sign-in runs through nginx, its requests spread over both instances, the events stream unbuffered; a forged X-Forwarded-For is replaced; /metrics stays inside")
    func demoFlowThroughNginx() async throws {
        try await Instances.run(environment: ["COUNTERSIGN_TRUSTED_PROXIES": "127.0.0.1"]) { instances in
            let nginx = try await Nginx(upstreams: instances.servers.map(\.port))
            defer { nginx.stop() }
            let phone = try await SimulatedPhone.enrolled(on: nginx.url, email: "ada@example.com")
            // The browser claims another address; nginx replaces the header with the one it saw.
            let signIn = try await WebSignIn.begin(
                on: nginx.url, email: "ada@example.com", transport: AddingHeader(name: "X-Forwarded-For", value: "203.0.113.9"))
            // The stream's first bytes pass nginx before any event exists: it does not buffer them.
            let events = try signIn.openEvents(on: nginx.url)
            try await events.waitUntilOpen()
            let opened = try await phone.open(try #require(try await phone.pending().first))
            // What the phone shows of the request: the address nginx saw, not one a client could choose.
            #expect(opened.data?["request_context"]?.objectValue?["client_ip"]?.stringValue == "127.0.0.1")
            let done = try await phone.approve(from: opened, otp: signIn.otp)
            #expect(done.journeyStepID == JourneyStepID.success)
            #expect(try await events.outcome.status == "approved")
            _ = try await signIn.finish()

            let served = nginx.upstreamsUsed
            for server in instances.servers {
                #expect(served.contains("127.0.0.1:\(server.port)"), "instance on port \(server.port) served none of the flow")
            }
            #expect(try await exchange(nginx.url + "/metrics").status == 404)
            #expect(try await exchange(nginx.url + "/healthz").header("Strict-Transport-Security")?.hasPrefix("max-age=31536000") == true)
            #expect(try await exchange(instances[0].url + "/metrics").status == 200, "scraped at each instance directly")
        }
    }

    @Test("nginx cuts off a client that trickles its request head, and answers an oversized request line with 414 and oversized headers with 431, in the API's error form with HSTS")
    func requestHeadLimits() async throws {
        try await Instances.run { instances in
            let nginx = try await Nginx(upstreams: instances.servers.map(\.port))
            defer { nginx.stop() }
            // A slow-loris: a header line every half second, never the blank line that ends the head.
            let trickling = try SlowConnectionsTests.SlowClient(port: nginx.port)
            defer { trickling.close() }
            // Cut off without an answer by the 10 s deadline; nginx's default (60 s) would leave it open here.
            #expect(trickling.trickle(for: 30) == .cutOff)

            let longLine = try await exchange(nginx.url + "/v1/" + String(repeating: "a", count: 9000))
            #expect(longLine.status == 414)
            #expect((longLine.json["error"] as? [String: Any])?["code"] as? String == "http_414")
            #expect(longLine.header("X-Request-Id")?.count == 32)
            #expect(longLine.header("Strict-Transport-Security")?.hasPrefix("max-age=31536000") == true)
            let largeHeader = try await exchange(nginx.url + "/healthz", headers: ["X-Large": String(repeating: "b", count: 9000)])
            #expect(largeHeader.status == 431)
            #expect((largeHeader.json["error"] as? [String: Any])?["code"] as? String == "http_431")
            #expect(largeHeader.header("X-Request-Id")?.count == 32)
            #expect(largeHeader.header("Strict-Transport-Security")?.hasPrefix("max-age=31536000") == true)
            // Within the limits, requests pass as before.
            #expect(try await exchange(nginx.url + "/healthz", headers: ["X-Large": String(repeating: "b", count: 6000)]).status == 200)
        }
    }
}

extension LoadBalancerTests {
    @Test("nginx gives each request an id of its own, which the instance answers and logs its line under; an id the client sends is replaced")
    func requestIDsThroughNginx() async throws {
        try await Instances.run { instances in
            let nginx = try await Nginx(upstreams: instances.servers.map(\.port))
            defer { nginx.stop() }
            let answers = [
                try await exchange(nginx.url + "/healthz"),
                try await exchange(nginx.url + "/healthz", headers: ["X-Request-Id": "chosen-by-the-client"]),
            ]
            let ids = try answers.map { try #require($0.header("X-Request-Id")) }
            #expect(!ids.contains("chosen-by-the-client"))
            #expect(ids.allSatisfy { $0.count == 32 } && Set(ids).count == 2)
            // Each log line is written as its request ends, which may be just after the answer.
            try await eventually("nginx logged the requests under the ids answered") {
                Set(ids).isSubset(of: nginx.accessLog.map(\.requestID))
            }
            try await eventually("an instance logged each request under its id") {
                let serversLog = instances.servers.map(\.output).joined()
                return ids.allSatisfy(serversLog.contains)
            }
        }
    }
}

/// A transport that adds one header to every request, as a client that sets it itself.
struct AddingHeader: HTTPTransport {
    let name: String
    let value: String

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        var request = request
        request.setValue(value, forHTTPHeaderField: name)
        return try await URLSessionTransport().send(request)
    }
}

/// nginx in the foreground with the repository's site configuration, pointed at `upstreams`.
final class Nginx {
    private var child: ChildProcess?
    let port: Int
    private let directory: URL

    var url: String { "http://127.0.0.1:\(port)" }

    init(upstreams: [Int]) async throws {
        port = try RunningServer.freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let site = try String(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("deploy/nginx-countersign.conf"), encoding: .utf8)
            .replacingOccurrences(of: "127.0.0.1:8081", with: "127.0.0.1:\(upstreams[0])")
            .replacingOccurrences(of: "127.0.0.1:8082", with: "127.0.0.1:\(upstreams[1])")
            .replacingOccurrences(of: "listen 127.0.0.1:8080", with: "listen 127.0.0.1:\(port)")
        try site.write(to: directory.appendingPathComponent("countersign.conf"), atomically: true, encoding: .utf8)
        let path = directory.path
        try """
            daemon off;
            worker_processes 1;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log;
            events { worker_connections 1024; }
            http {
                log_format upstream '$upstream_addr $request_id';
                access_log \(path)/access.log upstream;
                client_body_temp_path \(path)/body;
                proxy_temp_path \(path)/proxy;
                fastcgi_temp_path \(path)/fastcgi;
                uwsgi_temp_path \(path)/uwsgi;
                scgi_temp_path \(path)/scgi;
                include \(path)/countersign.conf;
            }
            """.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        child = try await ChildProcess(
            URL(fileURLWithPath: "/usr/sbin/nginx"), arguments: ["-p", path, "-c", "\(path)/nginx.conf", "-e", "\(path)/error.log"],
            settings: [:])
        for _ in 0..<100 {
            if let (_, response) = try? await URLSession.shared.data(from: URL(string: url + "/healthz")!),
                (response as? HTTPURLResponse)?.statusCode == 200
            {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        stop()
        let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        throw RunningServer.ServerDidNotStart(output: "nginx did not answer:\n\(log)")
    }

    /// The instances nginx passed requests to, as `address:port`, from its access log.
    var upstreamsUsed: Set<String> {
        Set(accessLog.map(\.upstreams).joined())
    }

    /// nginx's access log: for each request, the instances it was passed to and the id nginx gave it.
    var accessLog: [(upstreams: [String], requestID: String)] {
        let log = (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").map { line in
            var fields = line.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
            let requestID = fields.popLast() ?? ""
            return (fields, requestID)
        }
    }

    func stop() {
        if let child, !child.signal(SIGTERM, gracePeriod: 20) {
            print("nginx on port \(port) did not stop within 20 s of SIGTERM; killed")
            child.signal(SIGKILL, gracePeriod: 60)
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
