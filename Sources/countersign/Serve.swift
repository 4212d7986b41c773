import ArgumentParser
import CountersignServer
import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// `countersign serve`: run the server.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the Countersign server.",
        discussion: "Environment variables (flags take precedence):\n" + variablesHelp)

    /// One line per variable, the names padded to the longest so that none is cut.
    private static var variablesHelp: String {
        let variables = CountersignServer.Configuration.variables
        let width = variables.map(\.name.count).max() ?? 0
        return variables.map {
            "  \($0.name.padding(toLength: width, withPad: " ", startingAt: 0)) \($0.meaning) (default: \($0.defaultValue))"
        }.joined(separator: "\n")
    }

    @ArgumentParser.Option(help: "Address to listen on (COUNTERSIGN_HOST).")
    var hostname: String?

    @ArgumentParser.Option(help: "Port to listen on (COUNTERSIGN_PORT).")
    var port: Int?

    @ArgumentParser.Flag(
        name: .customLong("dev"),
        help: "Development mode: the demo application and the development-only journeys (email-trusting enrollment). Never in production.")
    var development = false

    /// How long a stopping server lets open requests finish.
    static let shutdownGrace = Duration.seconds(5)

    func run() async throws {
        // Async code then runs on the event loops that do the HTTP and database I/O, instead of handing every
        // request and every database answer between NIO's threads and Swift's cooperative pool. On Linux
        // only: elsewhere NIO allows it from the main thread alone, which this is not.
        #if os(Linux)
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        #endif
        let configuration = try loadConfiguration(mode: development ? .development : .production, hostname: hostname, port: port)
        let openFiles = OpenFileLimit.raiseToHardLimit()
        let logger = bootstrapLogging()
        if openFiles.after > openFiles.before {
            logger.info("Open files limit raised from \(openFiles.before) to \(openFiles.after) (each connection is one)")
        }
        let app = try await CountersignApp.make(
            configuration: configuration,
            dependencies: .init(announceAdminKey: { key in
                print("Generated the admin API key (shown only this once, keep it safe): \(key)")
            }),
            logger: logger)
        let server = app.application(onServerRunning: { channel in
            // At notice, so that it is written at every level the server logs at.
            let address = channel.localAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
            logger.notice("Server started on http://\(address)")
        })
        // Stops on SIGTERM or SIGINT: the server first, then the background parts, the database last. Requests
        // still open after `shutdownGrace` (an events stream, a phone's long-poll) are cancelled.
        var services = ServiceGroupConfiguration(services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        services.maximumGracefulShutdownDuration = Self.shutdownGrace
        try await ServiceGroup(configuration: services).run()
    }
}

/// `countersign migrate`: bring the database schema up to date and exit.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Bring the database schema up to date and exit.")

    @ArgumentParser.Flag(help: "Also remove the demo application a development start created (so that a production start accepts the database).")
    var removeDemoApplication = false

    func run() async throws {
        let configuration = try loadConfiguration(mode: .production, hostname: nil, port: nil)
        try await CountersignApp.prepareDatabase(
            location: configuration.database, removingDemoApplication: removeDemoApplication, logger: bootstrapLogging())
        print(removeDemoApplication ? "Database is up to date; the demo application is removed." : "Database is up to date.")
    }
}

/// Reads the configuration or stops with every problem listed.
func loadConfiguration(mode: CountersignServer.Configuration.Mode, hostname: String?, port: Int?) throws -> CountersignServer.Configuration {
    do {
        return try CountersignServer.Configuration.load(
            environment: ProcessInfo.processInfo.environment, mode: mode, hostname: hostname, port: port)
    } catch {
        FileHandle.standardError.write(Data((error.description + "\n").utf8))
        throw ExitCode(2)
    }
}

/// Sets up the process's logging as `LOG_FORMAT` and `LOG_LEVEL` say, and returns the server's logger.
func bootstrapLogging() -> Logger {
    let process = ProcessInfo.processInfo.environment
    // Never below info, where the libraries would log request headers and the values of queries, which
    // carry secrets; info by default, for the one line per answered request (docs/CONFIGURATION.md).
    let requested = process["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) }
    let level = max(requested ?? .info, .info)
    if process["LOG_FORMAT"] == "json" {
        LoggingSystem.bootstrap { label in JSONLogHandler(label: label, level: level) }
    } else {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardOutput(label: label)
            handler.logLevel = level
            return EscapingLogHandler(handler)
        }
    }
    let logger = Logger(label: "countersign")
    if let named = process["LOG_LEVEL"], requested == nil {
        logger.warning("LOG_LEVEL '\(named)' is not a level (trace, debug, info, notice, warning, error, critical): logging at info.")
    }
    return logger
}
