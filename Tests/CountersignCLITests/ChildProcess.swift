import Foundation
import Subprocess
import Synchronization
import SystemPackage

/// A program the tests start and stop while they run: `countersign serve`, nginx.
///
/// Children are started through swift-subprocess, never Foundation's `Process`: on Linux,
/// `Process.run()` reads `/proc/self/fd` with a 256-byte copy per entry, which crashes a test
/// process that holds many descriptors (the slow-connection tests hold over a thousand) whenever an
/// entry ends near an unmapped page (swift-corelibs-foundation pull request 5472).
final class ChildProcess: Sendable {
    let pid: pid_t
    /// Set once swift-subprocess has reaped the program: from then on `pid` may name another process.
    private let reaped: Flag

    /// Starts `executable` in `directory` with `settings` in its environment (see `environment(_:)`); what
    /// it prints is appended to `log`, or dropped without one. Returns once the program has been started.
    init(_ executable: URL, arguments: [String], settings: [String: String], directory: URL? = nil, log: URL? = nil) async throws {
        let output: FileDescriptor? = try log.map {
            try FileDescriptor.open(FilePath($0.path), .writeOnly, options: [.append, .create], permissions: [.ownerReadWrite])
        }
        let started = AsyncThrowingStream<pid_t, any Error>.makeStream()
        let reaped = Flag()
        self.reaped = reaped
        // The task outlives this call: it holds the program until it exits.
        Task {
            do {
                let configuration = Subprocess.Configuration(
                    executable: .path(FilePath(executable.path)), arguments: Arguments(arguments),
                    environment: Self.environment(settings), workingDirectory: directory.map { FilePath($0.path) })
                // After `body` returns, `run` waits for the program to exit, then reaps it.
                if let output {
                    _ = try await Subprocess.run(
                        configuration, input: .none, output: .fileDescriptor(output, closeAfterSpawningProcess: true),
                        error: .combinedWithOutput
                    ) { started.continuation.yield($0.processIdentifier.value) }
                } else {
                    _ = try await Subprocess.run(configuration, input: .none, output: .discarded, error: .discarded) {
                        started.continuation.yield($0.processIdentifier.value)
                    }
                }
                started.continuation.finish()
            } catch {
                // Before the start, the caller hears of it; after it, only the test's output can.
                print("\(executable.lastPathComponent): \(error)")
                started.continuation.finish(throwing: error)
            }
            reaped.value.store(true, ordering: .releasing)
        }
        guard let pid = try await started.stream.first(where: { _ in true }) else { throw NotStarted(executable: executable.path) }
        self.pid = pid
    }

    /// Whether the program has exited. Looks without reaping (swift-subprocess reaps it) and without
    /// waiting for a Swift task, so it may be asked from a blocking loop on any thread.
    var hasExited: Bool {
        if reaped.value.load(ordering: .acquiring) { return true }
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return errno == ECHILD }  // ECHILD: reaped
        return info.si_signo == SIGCHLD
    }

    /// Sends `signal`, then waits up to `gracePeriod` seconds for the program to exit. Returns whether it did.
    @discardableResult
    func signal(_ signal: Int32, gracePeriod: TimeInterval) -> Bool {
        guard !hasExited else { return true }
        kill(pid, signal)
        let deadline = Date().addingTimeInterval(gracePeriod)
        while !hasExited, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return hasExited
    }

    /// The environment of this test process without its `COUNTERSIGN_` settings, with `settings` on top:
    /// a child configures itself only from what its test gives it.
    static func environment(_ settings: [String: String]) -> Environment {
        let variables = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COUNTERSIGN_") }.merging(settings) { _, new in new }
        return .custom(Dictionary(uniqueKeysWithValues: variables.compactMap { name, value in Environment.Key(rawValue: name).map { ($0, value) } }))
    }

    private final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    struct NotStarted: Error, CustomStringConvertible {
        let executable: String
        var description: String { "\(executable) did not start" }
    }
}
