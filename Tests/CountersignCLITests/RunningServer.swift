import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `countersign serve` as a child process on a free port, ready once it has said so. What it prints goes
/// to a file, never a pipe: a pipe the test stopped reading would block the server's next log line.
final class RunningServer: Sendable {
    let child: ChildProcess
    let port: Int
    private let logFile: URL

    /// Starts the server in `directory` (where its SQLite file and master key file live), on `port` or a free
    /// one; in development mode (`--dev`: the demo application) unless `development` is false. With
    /// `openFilesSoftLimit` it starts as a system that grants a process that many open files at first would.
    ///
    /// A free port is only free when it is chosen: before the server binds it, another test's connection
    /// may take it as its own source port. The server then stops with "Address already in use", and it is
    /// started again on another free port.
    init(
        directory: URL, environment: [String: String], port: Int? = nil, development: Bool = true, openFilesSoftLimit: Int? = nil
    ) async throws {
        var attempts = 1
        while true {
            let chosen = try port ?? Self.freePort()
            let logFile = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-serve-\(UUID().uuidString).log")
            let child = try await Self.start(
                directory: directory, environment: environment, port: chosen, development: development,
                openFilesSoftLimit: openFilesSoftLimit, log: logFile)
            do {
                try await Self.waitUntilStarted(child, log: logFile)
                (self.child, self.port, self.logFile) = (child, chosen, logFile)
                return
            } catch let failure as ServerDidNotStart where port == nil && attempts < 5 && failure.output.contains("Address already in use") {
                attempts += 1
            }
        }
    }

    private static func start(
        directory: URL, environment: [String: String], port: Int, development: Bool, openFilesSoftLimit: Int?, log: URL
    ) async throws -> ChildProcess {
        let arguments = ["serve", "--port", String(port)] + (development ? ["--dev"] : [])
        if let openFilesSoftLimit {
            return try await ChildProcess(
                URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", "ulimit -S -n \(openFilesSoftLimit) && exec \"$0\" \"$@\"", CommandRunner.executable().path] + arguments,
                settings: environment, directory: directory, log: log)
        }
        return try await ChildProcess(CommandRunner.executable(), arguments: arguments, settings: environment, directory: directory, log: log)
    }

    /// Waits until the server announces it is listening; throws if it exits first or a minute passes.
    private static func waitUntilStarted(_ child: ChildProcess, log: URL) async throws {
        let deadline = Date().addingTimeInterval(60)
        while !firstOutput(of: log).contains("Server started") {
            guard !child.hasExited else { throw ServerDidNotStart(output: output(of: log)) }
            guard Date() < deadline else {
                child.signal(SIGKILL, gracePeriod: 60)
                throw ServerDidNotStart(output: "no \"Server started\" within a minute:\n" + output(of: log))
            }
            do {
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                child.signal(SIGKILL, gracePeriod: 60)  // the test was cancelled: leave no server behind
                throw error
            }
        }
    }

    private static func output(of log: URL) -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// What the server printed up to "Server started".
    private static func firstOutput(of log: URL) -> String {
        let text = output(of: log)
        guard let started = text.range(of: "Server started") else { return text }
        return String(text[..<started.upperBound])
    }

    /// Everything the server printed so far.
    var output: String { Self.output(of: logFile) }

    /// What the server printed up to "Server started".
    var firstOutput: String { Self.firstOutput(of: logFile) }

    var url: String { "http://127.0.0.1:\(port)" }

    var isRunning: Bool { !child.hasExited }

    /// Stops the server with SIGTERM; one that has not stopped within `gracePeriod` seconds is ended with SIGKILL.
    func stop(gracePeriod: TimeInterval = 20) {
        if !child.signal(SIGTERM, gracePeriod: gracePeriod) {
            print("countersign serve on port \(port) did not stop within \(Int(gracePeriod)) s of SIGTERM; killed")
            kill()
        }
    }

    /// Ends the server at once with SIGKILL: no shutdown, nothing flushed that was not already committed.
    func kill() {
        child.signal(SIGKILL, gracePeriod: 60)
    }

    func get(_ path: String, bearer: String? = nil) async throws -> String {
        try await exchange(url + path, bearer: bearer).body
    }

    func post(_ path: String, json: String, bearer: String? = nil) async throws -> String {
        try await exchange(url + path, json: json, bearer: bearer).body
    }

    /// A port nothing listens on right now: bind port 0, read what the kernel chose, release it.
    static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { throw ServerDidNotStart(output: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    struct ServerDidNotStart: Error, CustomStringConvertible {
        let output: String
        var description: String { "countersign serve did not start:\n\(output)" }
    }
}

/// One HTTP exchange as the tests make it: its status, body and headers.
struct Exchange {
    let status: Int
    let body: String
    let response: HTTPURLResponse

    func header(_ name: String) -> String? { response.value(forHTTPHeaderField: name) }

    var retryAfter: String? { header("Retry-After") }

    /// The body as a JSON object.
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
}

/// A GET of `url`, or a POST of `json`; with `bearer` as `Authorization` and any other `headers`.
func exchange(_ url: String, json: String? = nil, bearer: String? = nil, headers: [String: String] = [:]) async throws -> Exchange {
    var request = URLRequest(url: URL(string: url)!)
    request.timeoutInterval = 30
    if let json {
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(json.utf8)
    }
    if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = try #require(response as? HTTPURLResponse)
    return Exchange(status: http.statusCode, body: String(decoding: data, as: UTF8.self), response: http)
}

/// Waits until `condition` holds, looking again every 50 ms; fails the test after `limit` (a bound against
/// hanging, not a measure: nothing is asserted about how soon).
func eventually(_ what: String, within limit: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("never happened: \(what)")
            throw NeverHappened(what: what)
        }
        try await Task.sleep(for: .milliseconds(50))
    }
}

struct NeverHappened: Error, CustomStringConvertible {
    let what: String
    var description: String { "never happened: \(what)" }
}
