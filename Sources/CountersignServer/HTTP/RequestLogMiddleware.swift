import Foundation
import HTTPTypes
import Hummingbird

/// One log line per request once it is answered: method, route (the matched pattern, so no ids or
/// secrets from the path), status and duration, under the request's id; the id is also sent back as
/// `X-Request-Id`, so a client's report can be matched to the server's line. The same figures go to the
/// request metrics.
///
/// A caller (a proxy, say) may name the id in `X-Request-Id`; one that is not a short token (at most 64
/// letters, digits and `.-_:`) is replaced by a random one, so no caller writes what it likes into the
/// logs. Not Hummingbird's own id, which counts requests: a client could tell from two answers how many
/// requests the instance served between them.
struct RequestLogMiddleware: RouterMiddleware {
    let metrics: ServerMetrics

    static let longestRequestID = 64

    func handle(
        _ request: Request, context: ServerRequestContext, next: (Request, ServerRequestContext) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        let named = request.headers[.xRequestID]
        let requestID = named.flatMap { Self.isToken($0) ? $0 : nil } ?? UUID().uuidString
        var context = context
        context.logger[metadataKey: "hb.request.id"] = nil
        context.logger[metadataKey: "request-id"] = .string(requestID)
        var response = try await next(request, context)
        let elapsed = started.duration(to: .now)
        // The matched pattern, so no ids or secrets from the path.
        let route = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "(no route)"
        context.logger.info("request", metadata: [
            "method": "\(request.method.rawValue)", "route": "\(route)", "status": "\(response.status.code)",
            "duration_ms": "\(Self.milliseconds(elapsed))",
        ])
        metrics.requestAnswered(method: request.method.rawValue, route: route, status: UInt(response.status.code), duration: elapsed)
        response.headers[.xRequestID] = requestID
        return response
    }

    /// `duration` in milliseconds rounded to one decimal (a half up); Foundation's `String(format:)` cost a
    /// quarter of the log line here.
    static func milliseconds(_ duration: Duration) -> String {
        let tenths = Int((Double(duration.nanoseconds) / 100_000).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    private static func isToken(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= longestRequestID
            && id.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || [UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":")].contains(byte)
            }
    }
}

extension HTTPField.Name {
    static let xRequestID = HTTPField.Name("X-Request-Id")!
}
