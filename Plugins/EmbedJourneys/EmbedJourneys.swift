import Foundation
import PackagePlugin

/// Builds the journey templates of `journeys/` into the server, so that a binary started anywhere has
/// them (`COUNTERSIGN_JOURNEYS_DIR` replaces them). A change to a template rebuilds the file.
@main
struct EmbedJourneys: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let root = context.package.directoryURL.appending(path: "journeys")
        let names = (FileManager.default.subpaths(atPath: root.path) ?? [])
            .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
            .sorted()
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedJourneys.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(names.count) journey templates",
                executable: try context.tool(named: "embed-journeys").url,
                arguments: [output.path, root.path] + names,
                inputFiles: names.map { root.appending(path: $0) },
                outputFiles: [output])
        ]
    }
}
