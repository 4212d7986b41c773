import Foundation
import Vapor

/// `GET /sdk/countersign.js` and `/sdk/countersign.d.ts`: the browser SDK, shipped inside the server.
struct BrowserSDKRoutes: RouteCollection {
    /// File name → (media type, contents), read once at start.
    private let files: [String: (HTTPMediaType, ByteBuffer)]

    init() throws {
        guard let directory = Bundle.module.url(forResource: "Browser", withExtension: nil)?.appendingPathComponent("sdk") else {
            throw Abort(.internalServerError, reason: "the browser SDK is missing from the server's resources")
        }
        var files: [String: (HTTPMediaType, ByteBuffer)] = [:]
        for (name, type) in [("countersign.js", HTTPMediaType(type: "text", subType: "javascript", parameters: ["charset": "utf-8"])),
                             ("countersign.d.ts", HTTPMediaType(type: "text", subType: "plain", parameters: ["charset": "utf-8"]))] {
            files[name] = (type, ByteBuffer(data: try Data(contentsOf: directory.appendingPathComponent(name))))
        }
        self.files = files
    }

    func boot(routes: any RoutesBuilder) throws {
        routes.get("sdk", ":file") { request -> Response in
            guard let name = request.parameters.get("file"), let (type, body) = files[name] else {
                throw APIError.notFound("No such SDK file.")
            }
            let response = Response(status: .ok, body: .init(buffer: body))
            response.headers.contentType = type
            // Pages always get the SDK of the server they talk to.
            response.headers.replaceOrAdd(name: .cacheControl, value: "no-cache")
            return response
        }
    }
}
