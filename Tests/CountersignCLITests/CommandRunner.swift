import Foundation
import Subprocess
import SystemPackage

/// Runs a built executable (`countersign` unless told) and captures what it prints.
struct CommandRunner {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The executable `product` next to the test bundle (both live in the build products directory).
    static func executable(_ product: String = "countersign") -> URL {
        let productsDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = productsDirectory.appendingPathComponent(product)
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        return repositoryRoot.appendingPathComponent(".build/debug/\(product)")
    }

    struct Result {
        let status: Int32
        let output: String
        let errors: String
    }

    /// Runs `PRODUCT ARGUMENTS` to completion, in `directory` with `environment` over this process's own
    /// (without its `COUNTERSIGN_` settings). The waiting suspends, never blocks: a command such as
    /// `device watch` waits for requests that other test tasks must still be able to make.
    static func run(
        _ arguments: [String], product: String = "countersign", environment: [String: String] = [:], directory: URL? = nil
    ) async throws -> Result {
        try await run(.path(FilePath(executable(product).path)), arguments, environment: environment, directory: directory)
    }

    /// Runs `program` (`.name("python3")` is looked up on the `PATH`) as `run(_:product:environment:directory:)` does.
    static func run(
        _ program: Executable, _ arguments: [String], environment: [String: String] = [:], directory: URL? = nil
    ) async throws -> Result {
        let limit = 64 << 20
        let result = try await Subprocess.run(
            program, arguments: Arguments(arguments),
            environment: ChildProcess.environment(environment),
            workingDirectory: directory.map { FilePath($0.path) }, output: .string(limit: limit), error: .string(limit: limit))
        let status: Int32
        switch result.terminationStatus {
        case .exited(let code): status = code
        case .signaled(let signal): status = 128 + signal
        }
        return Result(status: status, output: result.standardOutput, errors: result.standardError)
    }
}
