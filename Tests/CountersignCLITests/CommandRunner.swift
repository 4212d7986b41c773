import Foundation

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

    /// Runs `PRODUCT ARGUMENTS` to completion. The waiting happens on a dispatch thread, never on
    /// the tests' cooperative threads: a command such as `device watch` waits for requests that other
    /// test tasks must still be able to make.
    static func run(
        _ arguments: [String], product: String = "countersign", environment: [String: String] = [:], directory: URL? = nil
    ) async throws -> Result {
        let process = Process()
        process.executableURL = executable(product)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COUNTERSIGN_") }
            .merging(environment) { _, new in new }
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let outputData = readAll(output.fileHandleForReading)
                let errorData = readAll(errors.fileHandleForReading)
                process.waitUntilExit()
                continuation.resume(returning: Result(
                    status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
                    errors: String(decoding: errorData, as: UTF8.self)))
            }
        }
    }

    /// Everything `handle` yields until its end. A read interrupted by a signal (another test's child
    /// exiting sends SIGCHLD) is repeated: Foundation's `readDataToEndOfFile` stops the process instead.
    private static func readAll(_ handle: FileHandle) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(handle.fileDescriptor, &buffer, buffer.count)
            if count > 0 {
                data.append(buffer, count: count)
            } else if count == 0 || errno != EINTR {
                return data
            }
        }
    }
}
