import CountersignCore
import CountersignServer
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TestServer {
    /// Runs `body` with a server on a real port behind a trusted balancer (itself, on the loopback), with
    /// `adjust`'s configuration besides; `body` gets the port to send to through `statusThroughBalancer`.
    static func runBehindBalancer(adjust: @escaping (inout Configuration) -> Void, _ body: (TestServer, Int) async throws -> Void) async throws {
        try await run(adjust: { configuration in
            adjust(&configuration)
            configuration.trustedProxies = ["127.0.0.1"]
        }) { (server: TestServer) async throws in try await server.listening { port in try await body(server, port) } }
    }
}

/// The status of `method path` (with `json` as its body) to the server on `port`, as the trusted balancer
/// passes it on for a client at `address`.
func statusThroughBalancer(port: Int, _ method: String, _ path: String, json: String? = nil, from address: String) async throws -> Int {
    try await throughBalancer(port: port, method, path, json: json, from: address).status
}

/// `method path` (with `json` as its body, `bearer` and `headers`) to the server on `port`, as the trusted
/// balancer passes it on for a client at `address`: the answer's status, body and `Retry-After`.
func throughBalancer(
    port: Int, _ method: String, _ path: String, json: String? = nil, bearer: String? = nil, headers: [String: String] = [:],
    from address: String
) async throws -> (status: Int, body: JSONValue, retryAfter: String?) {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
    request.httpMethod = method
    request.setValue(address, forHTTPHeaderField: "X-Forwarded-For")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
    if let json {
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(json.utf8)
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = try #require(response as? HTTPURLResponse)
    let body = (try? JSONDecoder().decode(JSONValue.self, from: data)) ?? .null
    return (http.statusCode, body, http.value(forHTTPHeaderField: "Retry-After"))
}
