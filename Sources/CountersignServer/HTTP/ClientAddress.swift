import Foundation
import HTTPTypes
import Hummingbird

/// Finds each request's client address once: the peer's, or, when the peer is a trusted load balancer,
/// the address it names in `X-Forwarded-For` (the rightmost entry that is not itself a trusted proxy; a
/// port the balancer wrote after it is left out, and an entry that names no address leaves the peer's).
/// From any other peer the header is ignored, so a client cannot choose the address its start limit and
/// the phone's request context see: entries to the left of the balancer's are the client's own words.
struct ClientAddressMiddleware: RouterMiddleware {
    let trustedProxies: Set<String>

    func handle(
        _ request: Request, context: ServerRequestContext, next: (Request, ServerRequestContext) async throws -> Response
    ) async throws -> Response {
        guard !trustedProxies.isEmpty else { return try await next(request, context) }
        var context = context
        context.clientAddress = ClientAddress.of(
            peer: context.clientAddress, forwardedFor: request.headers[values: .xForwardedFor], trustedProxies: trustedProxies)
        return try await next(request, context)
    }
}

enum ClientAddress {
    static func of(peer: String?, forwardedFor: [String], trustedProxies: Set<String>) -> String? {
        guard let peer, trustedProxies.contains(peer) else { return peer }
        let named = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        guard let client = named.reversed().first(where: { !trustedProxies.contains($0) }) else { return peer }
        return address(in: client) ?? peer
    }

    /// The IP address `entry` names: as it is, or without the port some balancers add (`203.0.113.5:41234`,
    /// `[2001:db8::1]:41234`); nil when it names none (`unknown`, say).
    private static func address(in entry: String) -> String? {
        if isIPAddress(entry) { return entry }
        let host: Substring
        if entry.hasPrefix("["), let end = entry.firstIndex(of: "]") {
            host = entry[entry.index(after: entry.startIndex)..<end]
        } else if let colon = entry.firstIndex(of: ":"), colon == entry.lastIndex(of: ":") {
            host = entry[..<colon]
        } else {
            return nil
        }
        return isIPAddress(String(host)) ? String(host) : nil
    }

    static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
