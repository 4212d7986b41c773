import Foundation
import Hummingbird

/// The browser files shipped inside the server: the SDK at `/sdk/…`, and in development mode the demo
/// web app at `/demo` (with `/` leading to it). A production server has no demo client to run it with,
/// and serves nothing it does not need.
struct BrowserRoutes: RouteGroup {
    private let sdk: BundledFiles
    private let demo: BundledFiles?

    init(servingDemo: Bool) throws {
        sdk = try BundledFiles(folder: "Browser/sdk", names: ["countersign.js", "countersign.d.ts"], anyOrigin: true)
        demo = servingDemo ? try BundledFiles(folder: "Browser/demo", names: ["index.html", "demo.js", "demo.css"]) : nil
    }

    func register(on router: Router<ServerRequestContext>) {
        router.get("sdk/:file") { _, context in try sdk.response(for: context.parameters.get("file")) }
        guard let demo else { return }
        router.get("demo") { _, _ in try demo.response(for: "index.html") }
        router.get("demo/:file") { _, context in try demo.response(for: context.parameters.get("file")) }
        router.get("/") { _, _ in Response.redirect(to: "/demo") }
    }
}
