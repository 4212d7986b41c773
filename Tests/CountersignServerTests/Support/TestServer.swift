import CountersignClient
import CountersignCore
@testable import CountersignServer
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The tests speak NIO's HTTP types, as AsyncHTTPClient and the SDKs' transports do.
typealias HTTPStatus = HTTPResponseStatus

/// A Countersign server for one test: its own database, a hand-moved clock, the shipped journeys, in
/// development mode (the demo application and the email-trusting registration) unless `adjust` says otherwise.
struct TestServer {
    static let adminKey = "test-admin-key-0123456789"
    static let issuer = "http://countersign.test"
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let journeysDirectory = repositoryRoot.appendingPathComponent("journeys").path

    let app: CountersignApp
    let clock: TestClock

    /// The server's database, to look inside it (`TestSQL`).
    var sql: any SQLExecutor { app.storage.db }

    /// Runs `body` against a fresh server and removes its database afterwards. `logger` receives the
    /// server's logs (the default drops them below warning).
    static func run(
        adjust: (inout Configuration) -> Void = { _ in }, logger: Logger? = nil, statementObserver: (@Sendable (String) -> Void)? = nil,
        _ body: (TestServer) async throws -> Void
    ) async throws {
        let database = try await TestDatabase.make()
        do {
            try await run(
                on: database, clock: TestClock(), masterKey: randomMasterKey(), adjust: adjust, logger: logger,
                statementObserver: statementObserver, body)
        } catch {
            try? await database.drop()
            throw error
        }
        try await database.drop()
    }

    /// Runs `body` against a server on `database`, which is left in place (a later server may restart on it).
    static func run(
        on database: TestDatabase, clock: TestClock, masterKey: MasterKeySource,
        adjust: (inout Configuration) -> Void = { _ in }, logger: Logger? = nil, statementObserver: (@Sendable (String) -> Void)? = nil,
        _ body: (TestServer) async throws -> Void
    ) async throws {
        var configuration = Configuration(
            mode: .development, hostname: "127.0.0.1", port: 0, database: database.location, publicURL: issuer, adminKey: adminKey,
            journeysDirectory: journeysDirectory, masterKey: masterKey)
        adjust(&configuration)
        do {
            let app = try await CountersignApp.make(configuration: configuration, dependencies: .init(clock: clock, statementObserver: statementObserver), logger: logger ?? quietLogger)
            try await withServices(app.services, logger: app.logger) {
                try await body(TestServer(app: app, clock: clock))
            }
        } catch {
            // PostgreSQL errors describe themselves only when asked to in full.
            // (Asked of the value itself: the compiler takes every `any Error` for one.)
            if (error as Any) is any CustomDebugStringConvertible { Issue.record("\(String(reflecting: error))") }
            throw error
        }
    }

    /// The server's logs in tests that do not read them: warnings and worse.
    static let quietLogger: Logger = {
        var logger = Logger(label: "countersign.tests")
        logger.logLevel = .warning
        return logger
    }()

    /// Makes a server on the PostgreSQL database at `url`, which must fail; returns why (and records an
    /// issue if it started).
    static func startRefusal(database url: String) async -> any Error {
        let configuration = Configuration(
            database: .postgres(url), adminKey: adminKey, journeysDirectory: journeysDirectory, masterKey: randomMasterKey())
        do {
            let app = try await CountersignApp.make(configuration: configuration, logger: quietLogger)
            // Started, then stopped at once, so that what it opened is closed.
            try await withServices(app.services, logger: app.logger) {}
        } catch {
            return error
        }
        Issue.record("the server started on \(url)")
        return CancellationError()
    }

    /// A master key of the test's own, so no key file is written.
    static func randomMasterKey() -> MasterKeySource {
        .key(Data((0..<MasterKeySource.keyLength).map { _ in UInt8.random(in: 0...255) }))
    }

    /// An SDK client talking to this server in-process.
    func client(_ clientID: String = "demo-native") -> OrchestrationClient {
        OrchestrationClient(baseURL: URL(string: "http://in-process")!, clientID: clientID, transport: InProcessTransport(app: app))
    }

    /// Sends a request and returns the status and the JSON body.
    func send(
        _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, rawBody: String? = nil, bytes: [UInt8]? = nil,
        contentType: String? = "application/json", bearer: String? = nil, userAgent: String? = nil, headers extra: HTTPHeaders = [:]
    ) async throws -> (status: HTTPStatus, body: JSONValue, headers: HTTPHeaders) {
        var headers = extra
        if let userAgent { headers.replaceOrAdd(name: "User-Agent", value: userAgent) }
        if let contentType { headers.replaceOrAdd(name: "Content-Type", value: contentType) }
        if let bearer { headers.replaceOrAdd(name: "Authorization", value: "Bearer \(bearer)") }
        var body: ByteBuffer?
        if let json { body = ByteBuffer(data: try JSONEncoder().encode(json)) }
        if let rawBody { body = ByteBuffer(string: rawBody) }
        if let bytes { body = ByteBuffer(bytes: bytes) }
        let response = try await request(method, path, headers: headers, body: body)
        let decoded = (try? JSONDecoder().decode(JSONValue.self, from: response.body)) ?? .null
        return (response.status, decoded, response.headers)
    }

    /// Sends an admin API request with the admin key.
    func admin(_ method: HTTPMethod, _ path: String, json: JSONValue? = nil) async throws -> (status: HTTPStatus, body: JSONValue) {
        let (status, body, _) = try await send(method, "/admin/v1/" + path, json: json, bearer: Self.adminKey)
        return (status, body)
    }

    /// Hands a request to the server's routes in-process, as its HTTP server would (a `Host` header
    /// becomes the request's authority), and reads the whole answer.
    func request(_ method: HTTPMethod, _ path: String, headers: HTTPHeaders = [:], body: ByteBuffer? = nil) async throws -> TestResponse {
        try await Self.request(app, method, path, headers: headers, body: body)
    }

    static func request(
        _ app: CountersignApp, _ method: HTTPMethod, _ path: String, headers: HTTPHeaders = [:], body: ByteBuffer? = nil
    ) async throws -> TestResponse {
        var fields = HTTPFields()
        var authority = "localhost"
        for (name, value) in headers {
            if name.lowercased() == "host" { authority = value } else if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        if let body { fields[.contentLength] = String(body.readableBytes) }
        let head = HTTPRequest(method: HTTPRequest.Method(method.rawValue)!, scheme: "http", authority: authority, path: path, headerFields: fields)
        let request = Request(head: head, body: RequestBody(buffer: body ?? ByteBuffer()))
        let context = ServerRequestContext(source: ApplicationRequestContextSource(channel: NIOAsyncTestingChannel(), logger: app.logger))
        let response = try await app.responder.respond(to: request, context: context)
        let collected = CollectedBody()
        try await response.body.write(collected)
        var answered = HTTPHeaders()
        for field in response.headers { answered.add(name: field.name.canonicalName, value: field.value) }
        return TestResponse(status: HTTPResponseStatus(statusCode: response.status.code), headers: answered, body: collected.buffer)
    }
}

/// An answer as a test reads it.
struct TestResponse: Sendable {
    let status: HTTPStatus
    let headers: HTTPHeaders
    let body: ByteBuffer
}

/// Keeps what a response body writes.
private final class CollectedBody: ResponseBodyWriter, Sendable {
    private let collected = Mutex(ByteBuffer())

    var buffer: ByteBuffer { collected.withLock { $0 } }

    func write(_ buffer: ByteBuffer) async throws {
        collected.withLock { _ = $0.writeImmutableBuffer(buffer) }
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

/// Routes SDK requests into the application without a socket.
struct InProcessTransport: HTTPTransport {
    let app: CountersignApp

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        var headers = HTTPHeaders()
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.add(name: name, value: value) }
        let url = request.url!
        let path = url.path + (url.query.map { "?" + $0 } ?? "")
        let response = try await TestServer.request(
            app, HTTPMethod(rawValue: request.httpMethod ?? "GET"), path, headers: headers, body: request.httpBody.map { ByteBuffer(data: $0) })
        let http = HTTPURLResponse(url: url, statusCode: Int(response.status.code), httpVersion: "HTTP/1.1", headerFields: [:])!
        return (Data(buffer: response.body), http)
    }
}

/// A network that can lose an answer: the request reaches the server and is answered, and the answer
/// never reaches the client, as on a connection dropped at that moment.
final class LosingTransport: HTTPTransport {
    private let network: any HTTPTransport
    private let losesNext = Mutex(false)

    init(_ network: any HTTPTransport) {
        self.network = network
    }

    /// The next request's answer is lost.
    func loseNextAnswer() {
        losesNext.withLock { $0 = true }
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let answer = try await network.send(request)
        if losesNext.withLock({ losing in defer { losing = false }; return losing }) { throw URLError(.networkConnectionLost) }
        return answer
    }
}
