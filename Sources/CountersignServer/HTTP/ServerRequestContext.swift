import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// What the server knows of a request beside the request itself: the client's address and, for a page
/// of another origin, that origin. The middlewares fill it in (`ClientAddressMiddleware`,
/// `ApplicationCORSMiddleware`); routes read it.
public struct ServerRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's IP address: the peer's, or the one a trusted load balancer names.
    var clientAddress: String?
    /// The `Origin` of a page on another origin than the server's own (`OriginPolicy.crossOrigin`).
    var crossOrigin: String?
    /// The request body as `StrictJSONMiddleware` parsed it, when it is JSON: routes decode from it.
    var parsedBody: JSONValue?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientAddress = source.channel.remoteAddress?.ipAddress
    }

    /// The largest request body read (`413 http_413` beyond): no field of the API comes near it.
    public var maxUploadSize: Int { 16 * 1024 }

    /// Every response is written by the one encoder the server writes all its JSON with.
    public var responseEncoder: WireResponseEncoder { WireResponseEncoder() }
}

/// Encodes a route's returned value as the server encodes everything it sends (`JSONEncoder.wire`).
public struct WireResponseEncoder: ResponseEncoder {
    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        Response.wireEncoded(try JSONEncoder.wire.encode(value))
    }
}

extension Response {
    /// A JSON response encoded as the server encodes everything it sends.
    static func wire(_ body: some Encodable, status: HTTPResponse.Status = .ok, cacheControl: String? = nil) throws -> Response {
        wireEncoded(try JSONEncoder.wire.encode(body), status: status, cacheControl: cacheControl)
    }

    /// A JSON response from a body already encoded with `JSONEncoder.wire`.
    static func wireEncoded(_ body: Data, status: HTTPResponse.Status = .ok, cacheControl: String? = nil) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let cacheControl { headers[.cacheControl] = cacheControl }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(data: body)))
    }
}

extension Request {
    /// The token of an `Authorization: Bearer …` header.
    var bearerToken: String? {
        guard let value = headers[.authorization] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1])
    }

    /// The query parameter `name`, percent-decoded.
    func query(_ name: String) -> String? {
        uri.queryParameters[Substring(name)].map(String.init)
    }

    /// The whole body, read once (`context.maxUploadSize` at most); empty when there is none.
    func collectedBody(_ context: ServerRequestContext) async throws -> ByteBuffer {
        try await body.collect(upTo: context.maxUploadSize)
    }

    /// The request's body as `Body`. A body that is not JSON of that shape is the client's fault, `400
    /// client_response_not_valid`; any other decoding error is the server's own (a stored row or state it
    /// could not read), which `ErrorMiddleware` answers with a 500.
    func decodeBody<Body: Decodable>(_ type: Body.Type, _ context: ServerRequestContext) async throws -> Body {
        let body = try await collectedBody(context)
        do {
            return try WireJSON.request(Body.self, from: body, parsed: context.parsedBody)
        } catch is DecodingError, is StrictJSON.Problem {
            throw ServiceError.notValid("The request body is not valid JSON of the expected shape.")
        }
    }
}

extension ServerRequestContext {
    /// A path parameter the route's pattern names (so always present).
    func parameter(_ name: String) -> String {
        parameters.get(name) ?? ""
    }
}

extension RequestOrigin {
    /// The client's address, the User-Agent, the page's origin (when not this server's) and the hash of the
    /// browser credential it presents (`Countersign-Browser-Credential`) of a request.
    init(_ request: Request, _ context: ServerRequestContext) {
        self.init(
            clientIP: context.clientAddress, userAgent: request.headers[.userAgent], webOrigin: context.crossOrigin,
            browserCredentialHash: request.headers[.countersignBrowserCredential].map(SecretDigest.hex))
    }
}

extension HTTPField.Name {
    /// The secret of a browser credential (`BrowserCredentialRecord`), which a browser that signed in before sends.
    static let countersignBrowserCredential = HTTPField.Name("Countersign-Browser-Credential")!
}

/// The routes of one part of the API, added to the server's router.
protocol RouteGroup {
    func register(on router: Router<ServerRequestContext>)
}
