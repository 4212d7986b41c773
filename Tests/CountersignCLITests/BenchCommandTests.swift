import Foundation
import Testing

/// The benchmark against a real server. Speed is never asserted: only that every flow completes as the
/// protocol promises and that the report says what it measured.
@Suite("countersign-bench")
struct BenchCommandTests {
    static let adminKey = "admin-key-0123456789"

    /// A server on a fresh database whose web sign-ins expire after 30 s and are removed at once.
    static func server() async throws -> RunningServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)")
        let journeys = directory.appendingPathComponent("journeys")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CommandRunner.repositoryRoot.appendingPathComponent("journeys"), to: journeys)
        let webLogin = journeys.appendingPathComponent("web_login.yaml")
        // The soak holds many pending approvals per user, which the push-fatigue limits would refuse.
        try String(contentsOf: webLogin, encoding: .utf8)
            .replacingOccurrences(of: "expires_in: 300", with: "expires_in: 30\n      one_pending_per_user: false\n      backoff_seconds: 0")
            .write(to: webLogin, atomically: true, encoding: .utf8)
        return try await RunningServer(directory: directory, environment: [
            "COUNTERSIGN_JOURNEYS_DIR": journeys.path, "COUNTERSIGN_ADMIN_KEY": adminKey,
            "COUNTERSIGN_RECORD_RETENTION": "0", "COUNTERSIGN_SWEEP_INTERVAL": "1",
            // Every simulated browser starts from 127.0.0.1.
            "COUNTERSIGN_START_RATE_PER_ADDRESS": "0", "COUNTERSIGN_START_RATE_PER_CLIENT": "0",
        ])
    }

    /// Runs the benchmark with `arguments` and returns the JSON report it prints on standard output.
    static func bench(_ arguments: [String], against server: RunningServer) async throws -> [String: Any] {
        let result = try await CommandRunner.run(
            arguments + ["--server", "http://127.0.0.1:\(server.port)", "--server-pid", String(server.child.pid),
                         "--json"],
            product: "countersign-bench")
        #expect(result.status == 0, "\(result.errors)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
    }

    @Test("complete flows of each web journey, and with polling, end with a verified token naming the phone; the server's, the benchmark's and the machine's usage are read", arguments: [
        ["--journey", "web_login_biometric_only"], ["--journey", "web_login"], ["--journey", "web_transaction_signing"],
        // A polling browser waits out the 3 s polling interval: time for one flow.
        ["--journey", "web_login_biometric_only", "--polling", "--duration", "5"],
    ])
    func flows(options: [String]) async throws {
        let server = try await Self.server()
        defer { server.stop() }
        let duration = options.contains("--duration") ? [] : ["--duration", "2"]
        let report = try await Self.bench(options + duration + ["--browsers", "2", "--warmup", "0"], against: server)
        #expect(report["waiting"] as? String == (options.contains("--polling") ? "polling" : "events stream"))
        #expect(report["errors"] as? Int == 0, "\(report["first_error"] ?? "")")
        #expect((report["completed_flows"] as? Int ?? 0) > 0)
        #expect((report["flows_per_second"] as? Double ?? 0) > 0)
        for latency in ["flow_ms", "resume_ms"] {
            let percentiles = try #require(report[latency] as? [String: Double], "\(latency)")
            #expect(Set(percentiles.keys) == ["p50", "p90", "p99", "max"])
            #expect((percentiles["max"] ?? 0) > 0)
        }
        let serverCPU = try #require(report["server_cpu_ms_per_flow"] as? Double)
        let benchCPU = try #require(report["bench_cpu_ms_per_flow"] as? Double)
        #expect((report["server_peak_rss_mib"] as? Double ?? 0) > 0)
        // The whole machine ran at least the server and the benchmark: less at most a clock tick
        // (/proc counts in hundredths of a second) lost at each edge by each of the three readings.
        let machineCPU = try #require(report["machine_cpu_ms_per_flow"] as? Double)
        let completed = Double(try #require(report["completed_flows"] as? Int))
        #expect(machineCPU >= serverCPU + benchCPU - 60 / completed, "machine \(machineCPU), server \(serverCPU), benchmark \(benchCPU) ms per flow")
    }

    @Test("the pending soak keeps every approval pending while measuring, then sees the sweep remove them once expired")
    func pendingSoak() async throws {
        let server = try await Self.server()
        defer { server.stop() }
        let report = try await Self.bench([
            "pending", "--admin-key", Self.adminKey, "--approvals", "40", "--phones", "2", "--concurrency", "4", "--samples", "4",
            "--probe-rate", "4", "--expiry-timeout", "90",
        ], against: server)
        #expect(report["pending_after_creation"] as? Int == 40)
        #expect(report["pending_while_measuring"] as? Int == 44)
        let polls = try #require(report["poll_milliseconds"] as? [String: Double])
        #expect((polls["max"] ?? 0) > 0)
        let expiry = try #require(report["expiry"] as? [String: Any])
        #expect(expiry["removed_all"] as? Bool == true)
        #expect((expiry["sign_ins_measured"] as? Int ?? 0) > 0)
    }
}
