import ArgumentParser
import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import NIOPosix
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@main
struct CountersignBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "countersign-bench",
        abstract: "Measure a running Countersign server.",
        discussion: """
            Start the server first (release build) in development mode, whose demo clients and email registration
            the benchmark uses, e.g. `swift run -c release countersign serve --dev`, and pass its pid to read its
            CPU time and memory from /proc. See docs/BENCHMARKS.md.
            """,
        subcommands: [Flows.self, PendingSoak.self], defaultSubcommand: Flows.self)
}

/// The server measured, and where the report goes.
struct TargetOptions: ParsableArguments {
    @Option(help: "The server's base URL.") var server = "http://127.0.0.1:8080"
    @Option(help: "The server's process id, for its CPU time and memory (Linux /proc).") var serverPID: Int32?
    @Flag(help: "Print the report as one JSON object with snake_case keys on standard output, instead of a table.")
    var json = false

    func serverURL() throws -> URL {
        guard let url = URL(string: server) else { throw ValidationError("--server is not a URL.") }
        return url
    }

    /// Runs `body` with a pooled HTTP client of `connections` connections, and writes its report.
    func measure(connections: Int, _ body: (PooledTransport) async throws -> some BenchReport) async throws {
        // The browsers' and phones' tasks then run on the event loops that carry their connections, instead
        // of handing every request and answer between NIO's threads and Swift's cooperative pool. On Linux
        // only: elsewhere NIO allows it from the main thread alone, which this is not.
        #if os(Linux)
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        #endif
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        // No spans: with the default (no-op) tracer the client still parses every request's URL for a span's
        // attributes, about 4 % of the load generator's CPU.
        configuration.tracing.tracer = nil
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let report = try await body(PooledTransport(client: http))
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                encoder.keyEncodingStrategy = .convertToSnakeCase
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                print(report.table)
            }
        } catch {
            try await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }
}

/// Complete web-to-mobile flows: flows/s, latencies, server CPU per flow.
struct Flows: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run complete web-to-mobile flows and measure them (the default).")

    @OptionGroup var target: TargetOptions
    @Option(help: "Concurrent browsers, each with its own user and phone.") var browsers = 32
    @Option(help: "Seconds of flows before measuring.") var warmup = 5
    @Option(help: "Seconds to measure.") var duration = 20
    @Option(help: "The web journey: web_login (number matching), web_login_biometric_only or web_transaction_signing.") var journey = BenchJourney.login.rawValue
    @Flag(help: "Browsers poll at polling_interval instead of listening on the events stream.") var polling = false
    @Option(help: "Another instance (on the same database) for the phones; every flow then crosses instances.")
    var phoneServer: String?

    func run() async throws {
        guard let journey = BenchJourney(rawValue: journey) else {
            throw ValidationError("--journey must be one of \(BenchJourney.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        let server = try target.serverURL()
        guard let phoneServer = URL(string: phoneServer ?? server.absoluteString) else { throw ValidationError("--phone-server is not a URL.") }
        // A stream, a poll and a phone's long-poll per pair can be open at once.
        try await target.measure(connections: browsers * 3 + 8) { transport in
            try await measure(journey: journey, server: server, phoneServer: phoneServer, transport: transport)
        }
    }

    private func measure(journey: BenchJourney, server: URL, phoneServer: URL, transport: PooledTransport) async throws -> FlowReport {
        let keys = JWTKeyCollection()
        let (jwks, _) = try await transport.send(URLRequest(url: server.appendingPathComponent(".well-known/jwks.json")))
        try await keys.add(jwks: JSONDecoder().decode(JWKS.self, from: jwks))

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let registering = ContinuousClock.now
        let pairs = try await FlowBenchmark.registerPhones(browsers, server: phoneServer, transport: transport, directory: directory)
        progress("Registered \(pairs.count) phones in \(registering.duration(to: .now)).")

        let benchmark = FlowBenchmark(server: server, transport: transport, journey: journey, polling: polling, keys: keys)
        let recorder = Recorder()
        let start = ContinuousClock.now
        let measuringFrom = start + .seconds(warmup)
        let end = measuringFrom + .seconds(duration)
        let serverPID = target.serverPID

        let phones = Task {
            await withDiscardingTaskGroup { group in
                for pair in pairs { group.addTask { await pair.answerRequests() } }
            }
        }
        // The server's usage, the benchmark's own and the machine's are read at the window's edges, like the
        // flows counted in it.
        @Sendable func usage(at instant: ContinuousClock.Instant) async throws -> WindowEdge {
            try await Task.sleep(until: instant)
            return WindowEdge(server: try serverPID.map(ProcessUsage.read), bench: try ProcessUsage.read(pid: getpid()), machine: try MachineUsage.read())
        }
        async let usageAtStart = usage(at: measuringFrom)
        async let usageAtEnd = usage(at: end)
        await withDiscardingTaskGroup { group in
            for pair in pairs {
                group.addTask {
                    let browser = benchmark.browser()
                    var flow = 0
                    while ContinuousClock.now < end {
                        flow += 1
                        let began = ContinuousClock.now
                        do {
                            let sample = try await benchmark.run(pair, in: browser, flow: flow)
                            if began >= measuringFrom, ContinuousClock.now <= end { await recorder.record(sample) }
                        } catch {
                            if began >= measuringFrom { await recorder.fail(error) }
                        }
                    }
                }
            }
        }
        phones.cancel()
        let (before, after) = try await (usageAtStart, usageAtEnd)
        return await recorder.report(
            journey: journey, polling: polling, browsers: browsers, seconds: duration, windowFrom: before, to: after)
    }
}

/// What is read of the processes and the machine at one edge of the measured window.
struct WindowEdge: Sendable {
    let server: ProcessUsage?
    let bench: ProcessUsage
    let machine: MachineUsage
}

extension BenchJourney: ExpressibleByArgument {}

/// Collects samples and errors from every browser.
actor Recorder {
    private var samples: [FlowSample] = []
    private var errors = 0
    private var firstError: String?

    func record(_ sample: FlowSample) {
        samples.append(sample)
    }

    func fail(_ error: any Error) {
        errors += 1
        if firstError == nil { firstError = String(describing: error) }
    }

    func report(
        journey: BenchJourney, polling: Bool, browsers: Int, seconds: Int, windowFrom start: WindowEdge, to end: WindowEdge
    ) -> FlowReport {
        let completed = samples.count
        func perFlow(_ spent: Duration) -> Double? {
            completed > 0 ? spent.inMilliseconds / Double(completed) : nil
        }
        let serverCPU = start.server.flatMap { start in end.server.map { $0.cpu - start.cpu } }
        return FlowReport(
            journey: journey.rawValue, waiting: polling ? "polling" : "events stream", browsers: browsers, seconds: seconds,
            completedFlows: completed, errors: errors, flowsPerSecond: Double(completed) / Double(seconds),
            flowMilliseconds: Percentiles(samples.map(\.flow)), resumeMilliseconds: Percentiles(samples.map(\.resume)),
            serverCPUMillisecondsPerFlow: serverCPU.flatMap(perFlow), serverPeakRSSMiB: end.server.map { Double($0.peakRSS) / 1_048_576 },
            benchCPUMillisecondsPerFlow: perFlow(end.bench.cpu - start.bench.cpu),
            machineCPUMillisecondsPerFlow: perFlow(end.machine.busy - start.machine.busy), firstError: firstError)
    }
}

/// What a benchmark prints: a Markdown table, or with `--json` its fields with snake_case keys.
protocol BenchReport: Encodable, Sendable {
    var table: String { get }
}

struct FlowReport: BenchReport, Codable {
    var journey: String
    var waiting: String
    var browsers: Int
    var seconds: Int
    var completedFlows: Int
    var errors: Int
    var flowsPerSecond: Double
    var flowMilliseconds: Percentiles
    var resumeMilliseconds: Percentiles
    var serverCPUMillisecondsPerFlow: Double?
    var serverPeakRSSMiB: Double?
    /// The benchmark's own CPU: it shares the machine with the server.
    var benchCPUMillisecondsPerFlow: Double?
    /// Everything the machine ran: the server, the benchmark, the database's own processes (PostgreSQL's)
    /// and the kernel. Less the server's and the benchmark's, it is what the rest of the machine spent.
    var machineCPUMillisecondsPerFlow: Double?
    var firstError: String?

    /// The names docs/BENCHMARKS.md and DESIGN.md use (the rest follow the encoder's snake_case).
    enum CodingKeys: String, CodingKey {
        case journey, waiting, browsers, seconds, completedFlows, errors, flowsPerSecond, firstError
        case flowMilliseconds = "flow_ms"
        case resumeMilliseconds = "resume_ms"
        case serverCPUMillisecondsPerFlow = "server_cpu_ms_per_flow"
        case serverPeakRSSMiB = "server_peak_rss_mib"
        case benchCPUMillisecondsPerFlow = "bench_cpu_ms_per_flow"
        case machineCPUMillisecondsPerFlow = "machine_cpu_ms_per_flow"
    }

    var table: String {
        func number(_ value: Double?, _ digits: Int = 1) -> String { value.map { String(format: "%.\(digits)f", $0) } ?? "n/a" }
        return """
            | measure | value |
            |---|---|
            | journey | \(journey) (\(waiting)), \(browsers) browsers, \(seconds) s |
            | completed flows/s | \(number(flowsPerSecond)) (\(completedFlows) flows, \(errors) errors) |
            | whole flow p50 / p90 / p99 / max (ms) | \(flowMilliseconds.summary) |
            | phone answers → browser resumed p50 / p90 / p99 / max (ms) | \(resumeMilliseconds.summary) |
            | server CPU per flow (ms) | \(number(serverCPUMillisecondsPerFlow, 3)) |
            | benchmark's own CPU per flow (ms) | \(number(benchCPUMillisecondsPerFlow, 3)) |
            | whole machine's CPU per flow (ms) | \(number(machineCPUMillisecondsPerFlow, 3)) |
            | server peak RSS (MiB) | \(number(serverPeakRSSMiB)) |
            \(firstError.map { "| first error | \($0) |" } ?? "")
            """
    }
}

struct Percentiles: Codable {
    var p50: Double
    var p90: Double
    var p99: Double
    var max: Double

    init(_ durations: [Duration]) {
        let sorted = durations.map(\.inMilliseconds).sorted()
        func at(_ fraction: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
        }
        p50 = at(0.5)
        p90 = at(0.9)
        p99 = at(0.99)
        max = sorted.last ?? 0
    }

    var summary: String { String(format: "%.1f / %.1f / %.1f / %.1f", p50, p90, p99, max) }
}

/// A line on standard error, so that standard output holds only the report.
func progress(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

extension Duration {
    var inMilliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}
