import AsyncHTTPClient
import CountersignClient
import CountersignCore
import Foundation
import Logging
import NIOCore
import PostgresNIO
import SimulatedPhone
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Several `countersign serve` processes on one fresh PostgreSQL database, sharing the master key and the
/// public URL (so one token issuer), as a bank runs them behind a load balancer.
///
/// The PostgreSQL server is the test script's throwaway cluster, named by `COUNTERSIGN_TEST_DATABASE_URL`;
/// `COUNTERSIGN_TEST_PG_CTL` is the `pg_ctl -D … -l …` command line that stops, starts and restarts it.
final class Instances {
    static var postgresURL: String? { nonEmpty("COUNTERSIGN_TEST_DATABASE_URL") }
    static var pgCtl: String? { nonEmpty("COUNTERSIGN_TEST_PG_CTL") }
    static let adminKey = ProductionModeTests.adminKey
    static let publicURL = "http://countersign.test"

    let environment: [String: String]
    private(set) var servers: [RunningServer] = []
    private let databaseName: String
    private let directory: URL

    /// Runs `body` with `count` fresh instances, and stops them and removes their database after. They
    /// start one after another unless `together`.
    static func run(
        count: Int = 2, environment: [String: String] = [:], together: Bool = false, _ body: (Instances) async throws -> Void
    ) async throws {
        let instances = try await Instances(count: count, environment: environment, together: together)
        try await withCleanup { try await body(instances) } then: { try await instances.stop() }
    }

    /// Starts `count` instances, one after another or all at once.
    private init(count: Int, environment extra: [String: String], together: Bool) async throws {
        let adminURL = try #require(Self.postgresURL, "COUNTERSIGN_TEST_DATABASE_URL names no PostgreSQL server")
        databaseName = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await Self.run("CREATE DATABASE \"\(databaseName)\"", adminURL: adminURL)
        var components = try #require(URLComponents(string: adminURL))
        components.path = "/" + databaseName
        let databaseURL = try #require(components.string)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("instances-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var key = [UInt8](repeating: 0, count: 32)
        for index in key.indices { key[index] = UInt8.random(in: 0...255) }
        environment = [
            "COUNTERSIGN_DATABASE_URL": databaseURL,
            "COUNTERSIGN_JOURNEYS_DIR": ProductionModeTests.templates,
            "COUNTERSIGN_ADMIN_KEY": Self.adminKey,
            "COUNTERSIGN_MASTER_KEY": Data(key).base64EncodedString(),
            "COUNTERSIGN_PUBLIC_URL": Self.publicURL,
            "COUNTERSIGN_START_RATE_PER_ADDRESS": "0",
        ].merging(extra) { _, new in new }
        guard together else {
            for _ in 0..<count { try await start() }
            return
        }
        let (directory, environment) = (directory, environment)
        servers = try await withThrowingTaskGroup(of: RunningServer.self) { group in
            for _ in 0..<count { group.addTask { try await RunningServer(directory: directory, environment: environment) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    private func start() async throws {
        servers.append(try await RunningServer(directory: directory, environment: environment))
    }

    subscript(index: Int) -> RunningServer { servers[index] }

    /// Stops every instance still running and removes the database.
    private func stop() async throws {
        for server in servers where server.isRunning { server.stop() }
        try await Self.run("DROP DATABASE IF EXISTS \"\(databaseName)\" WITH (FORCE)", adminURL: try #require(Self.postgresURL))
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `pg_ctl ARGUMENTS` on the test cluster (stop, start, restart), waiting for it on a dispatch
    /// thread. Through `system` rather than `Process`: Foundation's wait for the command never ended once
    /// pg_ctl had left a server running behind it.
    static func pgCtl(_ arguments: String) async throws {
        let command = try #require(pgCtl, "COUNTERSIGN_TEST_PG_CTL is not set") + " \(arguments) >/dev/null 2>&1"
        let status = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            DispatchQueue.global().async { continuation.resume(returning: system(command)) }
        }
        try #require(status == 0, "pg_ctl \(arguments) failed")
    }

    private static func nonEmpty(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// While `body` runs, the connections the instances hold to their database answer nothing and a new one
    /// is refused: each backend serving one is stopped (SIGSTOP), and the database takes no connection. That
    /// is how a hung host fails, or a network that drops an open connection's packets; a stopped server
    /// refuses at once instead. The backends go on (SIGCONT) and the database takes connections again after
    /// `body`, whether it throws or not.
    func whileConnectionsHang(_ body: () async throws -> Void) async throws {
        let adminURL = try #require(Self.postgresURL)
        try await Self.run("ALTER DATABASE \"\(databaseName)\" ALLOW_CONNECTIONS false", adminURL: adminURL)
        let backends = try await Self.run(
            "SELECT pid FROM pg_stat_activity WHERE datname = '\(databaseName)'", adminURL: adminURL
        ) { rows in try await rows.collect().map { try $0.decode(Int32.self) } }
        for backend in backends { kill(backend, SIGSTOP) }
        try await withCleanup(body, then: { [databaseName] in
            for backend in backends { kill(backend, SIGCONT) }
            try await Self.run("ALTER DATABASE \"\(databaseName)\" ALLOW_CONNECTIONS true", adminURL: adminURL)
        })
    }

    private static func run(_ sql: String, adminURL: String) async throws {
        try await run(sql, adminURL: adminURL) { _ in }
    }

    private static func run<Result>(
        _ sql: String, adminURL: String, _ read: (PostgresRowSequence) async throws -> Result
    ) async throws -> Result {
        let components = try #require(URLComponents(string: adminURL))
        let logger = Logger(label: "countersign.tests.instances")
        let connection = try await PostgresConnection.connect(
            configuration: PostgresConnection.Configuration(
                host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "postgres",
                password: components.password, database: String(components.path.dropFirst()), tls: .disable),
            id: 1, logger: logger)
        return try await withCleanup {
            try await read(try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger))
        } then: {
            try await connection.close()
        }
    }
}

/// Runs `body`, then `cleanup` whether `body` threw or not. A failure of `body` is the one thrown; a failure
/// of `cleanup` only when `body` succeeded.
func withCleanup<Result>(_ body: () async throws -> Result, then cleanup: () async throws -> Void) async throws -> Result {
    let result: Result
    do {
        result = try await body()
    } catch {
        try? await cleanup()
        throw error
    }
    try await cleanup()
    return result
}

/// A browser's or phone's HTTP that goes to whichever instance it is pointed at now: what a load
/// balancer does for it when an instance dies.
final class SwitchingTransport: HTTPTransport {
    private let target = Mutex("")

    init(to server: String) {
        point(at: server)
    }

    func point(at server: String) {
        target.withLock { $0 = server }
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await Self.send(request, to: target.withLock { $0 })
    }

    /// Sends `request` to `server` instead of the server it names.
    static func send(_ request: URLRequest, to server: String) async throws -> (Data, HTTPURLResponse) {
        var request = request
        var components = URLComponents(url: request.url!, resolvingAgainstBaseURL: true)!
        let target = URLComponents(string: server)!
        components.host = target.host
        components.port = target.port
        request.url = components.url
        return try await URLSessionTransport().send(request)
    }
}

/// A phone's HTTP that a round-robin load balancer spreads: each request goes to the next instance.
final class AlternatingTransport: HTTPTransport {
    private let servers: [String]
    private let sent = Mutex(0)

    init(between servers: [String]) {
        self.servers = servers
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let next = sent.withLock { sent in
            defer { sent += 1 }
            return servers[sent % servers.count]
        }
        return try await SwitchingTransport.send(request, to: next)
    }
}

/// A browser's `GET /v1/interactions/{id}/events`, read in the background up to its `approval` event.
final class EventsStream: Sendable {
    /// What the stream said: the approval's status, and whether a keep-alive came before it.
    struct Outcome {
        let status: String
        let keptAliveFirst: Bool
    }

    private let opened = OpenedFlag()
    private let reading: Task<Outcome, any Error>

    /// Opens the stream on `server`. With `reconnecting`, a stream that drops, or is refused while the
    /// server cannot serve it (503), is opened again half a second later, as a browser's EventSource does
    /// (for a minute at most); a refusal that says the request is wrong (4xx) ends it.
    init(server: String, interactionID: String, token: String, reconnecting: Bool = false) {
        let opened = opened
        reading = Task {
            var attempts = 1
            while true {
                do {
                    return try await Self.read(server: server, interactionID: interactionID, token: token, opened: opened)
                } catch let refused as StreamRefused where refused.status / 100 == 4 {
                    throw refused
                } catch where reconnecting && attempts < 120 {
                    attempts += 1
                    try await Task.sleep(for: .milliseconds(500))
                }
            }
        }
    }

    /// Waits until the server has opened the stream (its first bytes arrived): from then on it listens for
    /// the approval.
    func waitUntilOpen() async throws {
        try await eventually("the events stream is open") { opened.isSet }
    }

    var outcome: Outcome {
        get async throws { try await reading.value }
    }

    private static func read(server: String, interactionID: String, token: String, opened: OpenedFlag) async throws -> Outcome {
        var request = HTTPClientRequest(url: "\(server)/v1/interactions/\(interactionID)/events")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        guard response.status == .ok else { throw StreamRefused(status: Int(response.status.code)) }
        var text = ""
        for try await chunk in response.body {
            text += String(buffer: chunk)
            opened.set()
            guard let event = text.range(of: "event: approval\ndata: "), let end = text[event.upperBound...].firstIndex(of: "\n") else { continue }
            let data = try JSONDecoder().decode([String: String].self, from: Data(text[event.upperBound..<end].utf8))
            return Outcome(status: data["status"] ?? "", keptAliveFirst: text[..<event.lowerBound].contains(": keep-alive"))
        }
        throw StreamRefused(status: 0)
    }

    /// The stream was refused with `status`, or ended (0) before its event.
    struct StreamRefused: Error {
        let status: Int
    }

    private final class OpenedFlag: Sendable {
        private let value = Mutex(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
    }
}

/// A web sign-in as the demo runs it, its browser on one transport and its phone on another.
struct WebSignIn {
    let browser: OrchestrationClient
    let waiting: IdoResponse

    /// Starts `web_login` for `email` and answers the first step: the approval is created and pushed.
    static func begin(on server: String, email: String, transport: any HTTPTransport = URLSessionTransport()) async throws -> WebSignIn {
        let browser = OrchestrationClient(baseURL: URL(string: server)!, clientID: "demo-web", transport: transport)
        _ = try await browser.startJourney("web_login")
        let waiting = try await browser.submitClientResponse(.clientInput, data: ["email": .string(email)])
        #expect(waiting.journeyStepID == JourneyStepID.mobileApproveAuthentication)
        return WebSignIn(browser: browser, waiting: waiting)
    }

    var otp: String? { waiting.data?["otp"]?.stringValue }

    /// Opens the events stream on `server`, read in the background to its approval event.
    func openEvents(on server: String, reconnecting: Bool = false) throws -> EventsStream {
        EventsStream(server: server, interactionID: waiting.interactionID, token: try #require(waiting.interactionToken), reconnecting: reconnecting)
    }

    /// The browser's last call once its approval is settled: the token.
    func finish() async throws -> String {
        let done = try await browser.submitClientResponse(.clientInput, data: [:])
        #expect(done.journeyStepID == JourneyStepID.success)
        return try #require(done.token)
    }
}

extension SimulatedPhone {
    /// Registers a phone for `email` on `server` (development mode's email enrollment), in a fresh directory.
    static func enrolled(
        on server: String, email: String, push: PushRegistration? = nil, transport: any HTTPTransport = URLSessionTransport()
    ) async throws -> SimulatedPhone {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("phone-\(UUID().uuidString)")
        let profile = try await register(
            server: server, clientID: "demo-native", enrollment: .email(email), name: "\(email)'s phone", directory: directory,
            push: push ?? PushRegistration(channel: "inbox", token: nil, appID: nil))
        return try SimulatedPhone(profile: profile, directory: directory, transport: transport)
    }

    /// Opens the pending request `payload` names and approves it with the code the browser shows.
    func approve(_ payload: [String: String], otp: String?) async throws {
        let done = try await approve(from: try await open(payload), otp: otp)
        #expect(done.journeyStepID == JourneyStepID.success)
    }
}

extension RunningServer {
    /// `GET /admin/v1/stats` with the instances' admin key: what this instance holds open, what is queued.
    func stats() async throws -> [String: Any] {
        try await exchange(url + "/admin/v1/stats", bearer: Instances.adminKey).json
    }
}
