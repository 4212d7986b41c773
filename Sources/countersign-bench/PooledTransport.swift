import AsyncHTTPClient
import CountersignClient
import Foundation
import NIOCore
import NIOHTTP1
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SDK's transport over AsyncHTTPClient: pooled keep-alive connections, as a load generator needs
/// (URLSession on Linux opens far more connections and costs more CPU per request).
struct PooledTransport: HTTPTransport {
    let client: HTTPClient

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        guard let url = request.url else { throw BenchError.protocolViolation("a request without a URL") }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] { outgoing.headers.add(name: name, value: value) }
        if let body = request.httpBody { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(outgoing, timeout: .seconds(Int64(max(request.timeoutInterval, 60))))
        let body = try await response.body.collect(upTo: 1 << 20)
        // Its callers (the SDK, and the benchmark's own reads) take a response's status and body, never its
        // headers: Foundation's response parses and recases every header it is given, 6.5 % of the load
        // generator's CPU.
        guard let http = HTTPURLResponse(url: url, statusCode: Int(response.status.code), httpVersion: "HTTP/1.1", headerFields: nil) else {
            throw BenchError.protocolViolation("an HTTP response Foundation cannot represent")
        }
        return (Data(body.readableBytesView), http)
    }

    /// Reads `GET /v1/interactions/{id}/events` until the server reports the approval settled.
    func waitForApprovalEvent(server: URL, interactionID: String, token: String) async throws {
        var request = HTTPClientRequest(url: server.appendingPathComponent("v1/interactions/\(interactionID)/events").absoluteString)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        let response = try await client.execute(request, timeout: .seconds(360))
        guard response.status == .ok else { throw BenchError.protocolViolation("the events stream answered \(response.status.code)") }
        // The server ends the stream right after the event, so the connection goes back to the pool.
        var received = ""
        for try await chunk in response.body { received += String(buffer: chunk) }
        guard received.contains("event: approval\n") else { throw BenchError.protocolViolation("the events stream ended without an event") }
    }
}

enum BenchError: Error, CustomStringConvertible {
    case protocolViolation(String)
    case unexpectedStep(String)

    var description: String {
        switch self {
        case .protocolViolation(let what): "protocol violation: \(what)"
        case .unexpectedStep(let what): "unexpected step: \(what)"
        }
    }
}
