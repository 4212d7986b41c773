import Foundation
import Vapor

/// Finds each request's client address once: the peer's, or, when the peer is a trusted load balancer,
/// the address it names in `X-Forwarded-For` (the rightmost one that is not itself a trusted proxy).
/// From any other peer the header is ignored, so a client cannot choose the address its start limit and
/// the phone's request context see.
struct ClientAddressMiddleware: Middleware {
    let trustedProxies: Set<String>

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        request.storage[ClientAddress.self] = ClientAddress.of(
            peer: request.remoteAddress?.ipAddress, forwardedFor: request.headers[.xForwardedFor], trustedProxies: trustedProxies)
        return next.respond(to: request)
    }
}

enum ClientAddress: StorageKey {
    typealias Value = String

    static func of(peer: String?, forwardedFor: [String], trustedProxies: Set<String>) -> String? {
        guard let peer, trustedProxies.contains(peer) else { return peer }
        let named = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        return named.reversed().first { !trustedProxies.contains($0) && isIPAddress($0) } ?? peer
    }

    static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}

extension Request {
    /// The client's IP address as `ClientAddressMiddleware` found it.
    var clientAddress: String? { storage[ClientAddress.self] ?? remoteAddress?.ipAddress }
}
