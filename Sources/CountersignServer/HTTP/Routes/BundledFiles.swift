import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Files shipped in the server's resources, read once at start and served as they are: the browser
/// files and the API's contract.
struct BundledFiles: Sendable {
    private let files: [String: (type: String, body: ByteBuffer)]
    /// Whether pages of any origin may load the files (the SDK, which a relying party's page imports
    /// from this server: a module script is fetched with CORS). They hold nothing private.
    private let anyOrigin: Bool

    /// `names` in the resources' `folder`, or at their top when `folder` is nil.
    init(folder: String?, names: [String], anyOrigin: Bool = false) throws {
        self.anyOrigin = anyOrigin
        guard var directory = Bundle.module.resourceURL else {
            throw MissingResource(description: "the server's resources are missing")
        }
        if let folder { directory.appendPathComponent(folder) }
        var files: [String: (String, ByteBuffer)] = [:]
        for name in names {
            let url = directory.appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw MissingResource(description: "'\(folder.map { $0 + "/" } ?? "")\(name)' is missing from the server's resources")
            }
            files[name] = (Self.mediaType(of: name), ByteBuffer(data: data))
        }
        self.files = files
    }

    func response(for name: String?) throws -> Response {
        guard let name, let file = files[name] else { throw ServiceError.notFound("No such file.") }
        // Clients always get the files of the server they talk to.
        var headers: HTTPFields = [.contentType: file.type, .cacheControl: "no-cache", .xContentTypeOptions: "nosniff"]
        if anyOrigin {
            headers[.accessControlAllowOrigin] = "*"
            headers[.crossOriginResourcePolicy] = "cross-origin"
        }
        if file.type.hasPrefix("text/html") {
            // The pages load only their own scripts, styles and API; nothing may frame them.
            headers[.contentSecurityPolicy] =
                "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
                + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
            headers[.referrerPolicy] = "no-referrer"
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: file.body))
    }

    private static func mediaType(of name: String) -> String {
        if name.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if name.hasSuffix(".css") { return "text/css; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        if name.hasSuffix(".json") { return "application/json; charset=utf-8" }
        return "text/plain; charset=utf-8"
    }
}

/// A file the server ships is not in its resources (a broken build).
struct MissingResource: Error, CustomStringConvertible {
    let description: String
}

extension HTTPField.Name {
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let crossOriginResourcePolicy = HTTPField.Name("Cross-Origin-Resource-Policy")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
