import Foundation
import Vapor

/// The browser files shipped inside the server: the SDK at `/sdk/…`, and in development mode the demo
/// web app at `/demo` (with `/` leading to it). A production server has no demo client to run it with,
/// and serves nothing it does not need.
struct BrowserRoutes: RouteCollection {
    private let sdk: BundledFiles
    private let demo: BundledFiles?

    init(servingDemo: Bool) throws {
        sdk = try BundledFiles(folder: "Browser/sdk", names: ["countersign.js", "countersign.d.ts"], anyOrigin: true)
        demo = servingDemo ? try BundledFiles(folder: "Browser/demo", names: ["index.html", "demo.js", "demo.css"]) : nil
    }

    func boot(routes: any RoutesBuilder) throws {
        routes.get("sdk", ":file") { request in try sdk.response(for: request.parameters.get("file")) }
        guard let demo else { return }
        routes.get("demo") { _ in try demo.response(for: "index.html") }
        routes.get("demo", ":file") { request in try demo.response(for: request.parameters.get("file")) }
        routes.get { request in request.redirect(to: "/demo") }
    }
}
