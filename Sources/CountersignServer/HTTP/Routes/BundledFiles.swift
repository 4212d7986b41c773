import Foundation
import Vapor

/// Files shipped in the server's resources, read once at start and served as they are: the browser
/// files and the API's contract.
struct BundledFiles: Sendable {
    private let files: [String: (type: HTTPMediaType, body: ByteBuffer)]
    /// Whether pages of any origin may load the files (the SDK, which a relying party's page imports
    /// from this server: a module script is fetched with CORS). They hold nothing private.
    private let anyOrigin: Bool

    /// `names` in the resources' `folder`, or at their top when `folder` is nil.
    init(folder: String?, names: [String], anyOrigin: Bool = false) throws {
        self.anyOrigin = anyOrigin
        guard var directory = Bundle.module.resourceURL else {
            throw Abort(.internalServerError, reason: "the server's resources are missing")
        }
        if let folder { directory.appendPathComponent(folder) }
        var files: [String: (HTTPMediaType, ByteBuffer)] = [:]
        for name in names {
            let url = directory.appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw Abort(.internalServerError, reason: "'\(folder.map { $0 + "/" } ?? "")\(name)' is missing from the server's resources")
            }
            files[name] = (Self.mediaType(of: name), ByteBuffer(data: data))
        }
        self.files = files
    }

    func response(for name: String?) throws -> Response {
        guard let name, let file = files[name] else { throw ServiceError.notFound("No such file.") }
        let response = Response(status: .ok, body: .init(buffer: file.body))
        response.headers.contentType = file.type
        // Clients always get the files of the server they talk to.
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-cache")
        response.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        if anyOrigin {
            response.headers.replaceOrAdd(name: .accessControlAllowOrigin, value: "*")
            response.headers.replaceOrAdd(name: "Cross-Origin-Resource-Policy", value: "cross-origin")
        }
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
        if name.hasSuffix(".json") { return .json }
        return HTTPMediaType(type: "text", subType: "plain", parameters: utf8)
    }
}
