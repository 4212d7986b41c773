import Foundation
import Vapor

/// `GET /openapi.json`: the API's contract (OpenAPI 3.1), the file `HTTP/OpenAPI/openapi.json` of this
/// repository as shipped in the server's resources.
struct OpenAPIRoutes: RouteCollection {
    private let document: ByteBuffer

    init() throws {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json") else {
            throw Abort(.internalServerError, reason: "'openapi.json' is missing from the server's resources")
        }
        document = ByteBuffer(data: try Data(contentsOf: url))
    }

    func boot(routes: any RoutesBuilder) throws {
        routes.get("openapi.json") { _ in
            let response = Response(status: .ok, body: .init(buffer: document))
            response.headers.contentType = .json
            response.headers.replaceOrAdd(name: .cacheControl, value: "no-cache")
            return response
        }
    }
}
