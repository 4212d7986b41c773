import Foundation
import Vapor

/// The browser files shipped inside the server: the SDK at `/sdk/…` and the demo web app at `/demo`.
struct BrowserRoutes: RouteCollection {
    private let sdk: BundledFiles
    private let demo: BundledFiles

    init() throws {
        sdk = try BundledFiles(folder: "sdk", names: ["countersign.js", "countersign.d.ts"])
        demo = try BundledFiles(folder: "demo", names: ["index.html", "demo.js", "demo.css"])
    }

    func boot(routes: any RoutesBuilder) throws {
        routes.get("sdk", ":file") { request in try sdk.response(for: request.parameters.get("file")) }
        routes.get("demo") { _ in try demo.response(for: "index.html") }
        routes.get("demo", ":file") { request in try demo.response(for: request.parameters.get("file")) }
        routes.get { request in request.redirect(to: "/demo") }
    }
}

/// Files of one folder of the server's `Browser` resources, read once at start.
private struct BundledFiles: Sendable {
    private let files: [String: (type: HTTPMediaType, body: ByteBuffer)]

    init(folder: String, names: [String]) throws {
        guard let directory = Bundle.module.url(forResource: "Browser", withExtension: nil)?.appendingPathComponent(folder) else {
            throw Abort(.internalServerError, reason: "'Browser/\(folder)' is missing from the server's resources")
        }
        var files: [String: (HTTPMediaType, ByteBuffer)] = [:]
        for name in names {
            files[name] = (Self.mediaType(of: name), ByteBuffer(data: try Data(contentsOf: directory.appendingPathComponent(name))))
        }
        self.files = files
    }

    func response(for name: String?) throws -> Response {
        guard let name, let file = files[name] else { throw ServiceError.notFound("No such file.") }
        let response = Response(status: .ok, body: .init(buffer: file.body))
        response.headers.contentType = file.type
        // Pages always get the files of the server they talk to.
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-cache")
        response.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        if file.type == .html {
            // The pages load only their own scripts, styles and API; nothing may frame them.
            response.headers.replaceOrAdd(
                name: "Content-Security-Policy",
                value: "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
                    + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
            response.headers.replaceOrAdd(name: "Referrer-Policy", value: "no-referrer")
        }
        return response
    }

    private static func mediaType(of name: String) -> HTTPMediaType {
        let utf8 = ["charset": "utf-8"]
        if name.hasSuffix(".html") { return HTTPMediaType(type: "text", subType: "html", parameters: utf8) }
        if name.hasSuffix(".css") { return HTTPMediaType(type: "text", subType: "css", parameters: utf8) }
        if name.hasSuffix(".js") { return HTTPMediaType(type: "text", subType: "javascript", parameters: utf8) }
        return HTTPMediaType(type: "text", subType: "plain", parameters: utf8)
    }
}
