import Foundation
import Vapor

/// The browser files shipped inside the server: the SDK at `/sdk/…` and the demo web app at `/demo`.
struct BrowserRoutes: RouteCollection {
    private let sdk: BundledFiles
    private let demo: BundledFiles

    init() throws {
        sdk = try BundledFiles(folder: "Browser/sdk", names: ["countersign.js", "countersign.d.ts"])
        demo = try BundledFiles(folder: "Browser/demo", names: ["index.html", "demo.js", "demo.css"])
    }

    func boot(routes: any RoutesBuilder) throws {
        routes.get("sdk", ":file") { request in try sdk.response(for: request.parameters.get("file")) }
        routes.get("demo") { _ in try demo.response(for: "index.html") }
        routes.get("demo", ":file") { request in try demo.response(for: request.parameters.get("file")) }
        routes.get { request in request.redirect(to: "/demo") }
    }
}
