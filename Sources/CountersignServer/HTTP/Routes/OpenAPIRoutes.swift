import Hummingbird

/// `GET /openapi.json`: the API's contract (OpenAPI 3.1), the file `HTTP/OpenAPI/openapi.json` of this
/// repository as shipped in the server's resources.
struct OpenAPIRoutes: RouteGroup {
    private let document: BundledFiles

    init() throws {
        document = try BundledFiles(folder: nil, names: ["openapi.json"])
    }

    func register(on router: Router<ServerRequestContext>) {
        router.get("openapi.json") { _, _ in try document.response(for: "openapi.json") }
    }
}
