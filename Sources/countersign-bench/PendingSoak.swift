import ArgumentParser
import CountersignClient
import CountersignCore
import Foundation
import SimulatedPhone
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Many approvals nobody answers: server memory while they wait, start and poll latency meanwhile, and
/// then whether removing them once expired holds anyone up.
struct PendingSoak: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pending",
        abstract: "Create many pending approvals, measure memory and latency while they wait, then through their expiry sweep.",
        discussion: """
            Start the server with COUNTERSIGN_RECORD_RETENTION=0 and a short COUNTERSIGN_SWEEP_INTERVAL so the sweep
            follows expiry closely, and pass its admin key (the soak watches GET /admin/v1/stats).
            """)

    @OptionGroup var target: TargetOptions
    @Option(help: "The server's admin key, to read /admin/v1/stats.") var adminKey: String
    @Option(help: "Pending approvals to create.") var approvals = 100_000
    @Option(help: "Users, each with one registered phone that never answers.") var phones = 100
    @Option(help: "Browsers creating approvals at once.") var concurrency = 64
    @Option(help: "Starts and polls measured while the approvals wait.") var samples = 2_000
    @Option(help: "Sign-ins per second started while the expired approvals are removed.") var probeRate = 20
    @Option(help: "Seconds to wait for the sweep to remove the expired approvals.") var expiryTimeout = 1_200

    func run() async throws {
        let server = try target.serverURL()
        try await target.measure(connections: concurrency + 8) { transport in
            try await soak(server: server, transport: transport)
        }
    }

    private func soak(server: URL, transport: PooledTransport) async throws -> SoakReport {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-soak-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let emails = try await FlowBenchmark.registerPhones(phones, server: server, transport: transport, directory: directory).map(\.email)
        let stats = StatsReader(server: server, adminKey: adminKey, transport: transport)
        let storedBefore = try await stats.read().approvalsStored

        // 1. Create the approvals; keep every `keepEvery`-th waiting browser to poll later.
        progress("Creating \(approvals) pending approvals with \(concurrency) browsers…")
        let creating = ContinuousClock.now
        let keepEvery = max(1, approvals / samples)
        let kept = Collector<SignIn>()
        let next = Counter()
        try await withThrowingDiscardingTaskGroup { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while let index = await next.take(below: approvals) {
                        let signIn = try await SignIn.start(email: emails[index % emails.count], server: server, transport: transport)
                        if index % keepEvery == 0 { await kept.add(signIn) }
                        if index % 10_000 == 0, index > 0 { progress("  \(index) created") }
                    }
                }
            }
        }
        let creationSeconds = creating.duration(to: .now).inSeconds
        let afterCreation = try await stats.read()
        let usageAfterCreation = try target.serverPID.map(ProcessUsage.read)
        progress("Created in \(String(format: "%.0f", creationSeconds)) s; \(afterCreation.approvalsPending) pending.")

        // 2. While they wait: fresh sign-ins, and one poll of each kept browser.
        let probes = Collector<SignIn>()
        try await forEach(Array(0..<samples)) { _ in
            await probes.add(try await SignIn.start(email: emails.randomElement()!, server: server, transport: transport))
        }
        let polls = Collector<Duration>()
        try await forEach(await kept.all) { signIn in await polls.add(try await signIn.poll()) }
        let whilePending = try await stats.read()

        // 3. Expiry: sign-ins keep coming at a steady rate while the sweep removes the expired approvals.
        progress("Waiting for the approvals to expire and be removed…")
        let expiry = try await watchExpiry(
            stats: stats, otherApprovals: storedBefore + samples, emails: emails, server: server, transport: transport)
        let usageAtEnd = try target.serverPID.map(ProcessUsage.read)

        return SoakReport(
            approvalsCreated: approvals, creationSeconds: creationSeconds, pendingAfterCreation: afterCreation.approvalsPending,
            pendingWhileMeasuring: whilePending.approvalsPending,
            serverRSSMiBAfterCreation: usageAfterCreation.map { Double($0.rss) / 1_048_576 },
            serverPeakRSSMiB: usageAtEnd.map { Double($0.peakRSS) / 1_048_576 },
            startMilliseconds: Percentiles(await probes.all.map(\.startLatency)),
            waitingMilliseconds: Percentiles(await probes.all.map(\.submitLatency)),
            pollMilliseconds: Percentiles(await polls.all),
            expiry: expiry)
    }

    /// Runs sign-ins at `probeRate` until the soak's approvals are gone, noting when the sweep ran.
    /// `otherApprovals` were stored before the soak or made while measuring.
    private func watchExpiry(
        stats: StatsReader, otherApprovals: Int, emails: [String], server: URL, transport: PooledTransport
    ) async throws -> ExpiryReport {
        let probes = Collector<TimedSample>()
        let began = ContinuousClock.now
        let prober = Task {
            await withDiscardingTaskGroup { group in
                var tick = ContinuousClock.now
                while !Task.isCancelled {
                    group.addTask {
                        let at = ContinuousClock.now
                        if let signIn = try? await SignIn.start(email: emails.randomElement()!, server: server, transport: transport) {
                            await probes.add(TimedSample(at: at, latency: signIn.startLatency + signIn.submitLatency))
                        }
                    }
                    tick += .milliseconds(1000 / max(1, probeRate))
                    try? await Task.sleep(until: tick)
                }
            }
        }
        var sweepStarted: ContinuousClock.Instant?
        var sweepEnded: ContinuousClock.Instant?
        var lastStored = try await stats.read().approvalsStored
        while began.duration(to: .now) < .seconds(expiryTimeout) {
            // Counting costs the server a scan of each table: not too often.
            try await Task.sleep(for: .seconds(5))
            let stored = try await stats.read().approvalsStored
            if sweepStarted == nil, stored < lastStored { sweepStarted = .now }
            lastStored = stored
            // Every soak approval is gone once no more are left than the others and the sign-ins made since.
            if stored <= otherApprovals + (await probes.all.count) {
                sweepEnded = .now
                break
            }
        }
        prober.cancel()
        await prober.value
        let samples = await probes.all
        let removalStart = sweepStarted ?? .now
        let removalEnd = sweepEnded ?? .now
        return ExpiryReport(
            removedAll: sweepEnded != nil,
            secondsFromFirstRemovalToLast: sweepStarted.flatMap { start in sweepEnded.map { start.duration(to: $0).inSeconds } },
            signInsBeforeRemoval: Percentiles(samples.filter { $0.at < removalStart }.map(\.latency)),
            signInsDuringRemoval: Percentiles(samples.filter { $0.at >= removalStart && $0.at < removalEnd }.map(\.latency)),
            signInsMeasured: samples.count)
    }

    /// Runs `body` over `items`, `concurrency` at a time.
    private func forEach<Item: Sendable>(_ items: [Item], _ body: @escaping @Sendable (Item) async throws -> Void) async throws {
        let next = Counter()
        try await withThrowingDiscardingTaskGroup { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while let index = await next.take(below: items.count) { try await body(items[index]) }
                }
            }
        }
    }
}

/// A browser that started `web_login` and submitted the email: its approval is pending.
struct SignIn: Sendable {
    let browser: OrchestrationClient
    /// `POST /v1/journeys/web_login/start`.
    let startLatency: Duration
    /// Submitting the email, which creates the approval and answers the waiting step.
    let submitLatency: Duration
    /// When the browser may poll first (the waiting step's `polling_interval` after it arrived).
    let firstPoll: ContinuousClock.Instant

    static func start(email: String, server: URL, transport: PooledTransport) async throws -> SignIn {
        let browser = OrchestrationClient(baseURL: server, clientID: "demo-web", transport: transport)
        let started = ContinuousClock.now
        _ = try await browser.startJourney(BenchJourney.login.rawValue)
        let submitted = ContinuousClock.now
        let waiting = try await browser.submitClientResponse(.clientInput, data: ["email": .string(email)])
        guard waiting.journeyStepID == JourneyStepID.mobileApproveAuthentication, waiting.error == nil else {
            throw BenchError.unexpectedStep(SimulatedPhone.describe(waiting))
        }
        guard case .number(let interval) = waiting.data?["polling_interval"] else { throw BenchError.protocolViolation("no polling_interval") }
        let arrived = ContinuousClock.now
        return SignIn(
            browser: browser, startLatency: started.duration(to: submitted), submitLatency: submitted.duration(to: arrived),
            firstPoll: arrived + .seconds(interval))
    }

    /// One poll of the waiting browser, which must still be waiting.
    func poll() async throws -> Duration {
        try await Task.sleep(until: firstPoll)
        let started = ContinuousClock.now
        let answer = try await browser.submitClientResponse(.clientInput, data: [:])
        guard answer.journeyStepID == JourneyStepID.mobileApproveAuthentication, answer.error == nil else {
            throw BenchError.unexpectedStep(SimulatedPhone.describe(answer))
        }
        return started.duration(to: .now)
    }
}

struct TimedSample: Sendable {
    let at: ContinuousClock.Instant
    let latency: Duration
}

/// Results gathered by many tasks.
actor Collector<Item: Sendable> {
    private(set) var all: [Item] = []

    func add(_ item: Item) {
        all.append(item)
    }
}

/// Hands out 0, 1, 2, … to workers.
actor Counter {
    private var next = 0

    func take(below limit: Int) -> Int? {
        guard next < limit else { return nil }
        defer { next += 1 }
        return next
    }
}

/// `GET /admin/v1/stats`.
struct StatsReader: Sendable {
    let server: URL
    let adminKey: String
    let transport: PooledTransport

    struct Stats: Decodable {
        let approvalsPending: Int
        let approvalsStored: Int

        enum CodingKeys: String, CodingKey {
            case approvalsPending = "approvals_pending"
            case approvalsStored = "approvals_stored"
        }
    }

    func read() async throws -> Stats {
        var request = URLRequest(url: server.appendingPathComponent("admin/v1/stats"))
        request.setValue("Bearer \(adminKey)", forHTTPHeaderField: "Authorization")
        let (body, response) = try await transport.send(request)
        guard response.statusCode == 200 else { throw BenchError.protocolViolation("/admin/v1/stats answered \(response.statusCode)") }
        return try JSONDecoder().decode(Stats.self, from: body)
    }
}

struct SoakReport: BenchReport, Codable {
    var approvalsCreated: Int
    var creationSeconds: Double
    var pendingAfterCreation: Int
    var pendingWhileMeasuring: Int
    var serverRSSMiBAfterCreation: Double?
    var serverPeakRSSMiB: Double?
    var startMilliseconds: Percentiles
    var waitingMilliseconds: Percentiles
    var pollMilliseconds: Percentiles
    var expiry: ExpiryReport

    var table: String {
        func number(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "n/a" }
        return """
            | measure | value |
            |---|---|
            | approvals created | \(approvalsCreated) in \(number(creationSeconds)) s (\(number(Double(approvalsCreated) / creationSeconds))/s) |
            | pending after creation / while measuring | \(pendingAfterCreation) / \(pendingWhileMeasuring) |
            | server RSS after creation (MiB) | \(number(serverRSSMiBAfterCreation)) |
            | server peak RSS, whole soak (MiB) | \(number(serverPeakRSSMiB)) |
            | start while pending p50 / p90 / p99 / max (ms) | \(startMilliseconds.summary) |
            | email → waiting (creates an approval) p50 / p90 / p99 / max (ms) | \(waitingMilliseconds.summary) |
            | poll while pending p50 / p90 / p99 / max (ms) | \(pollMilliseconds.summary) |
            | expired approvals all removed | \(expiry.removedAll ? "yes" : "no"), over \(number(expiry.secondsFromFirstRemovalToLast)) s |
            | sign-in (start + email) before removal p50 / p90 / p99 / max (ms) | \(expiry.signInsBeforeRemoval.summary) |
            | sign-in (start + email) during removal p50 / p90 / p99 / max (ms) | \(expiry.signInsDuringRemoval.summary) |
            """
    }
}

struct ExpiryReport: Codable, Sendable {
    var removedAll: Bool
    var secondsFromFirstRemovalToLast: Double?
    var signInsBeforeRemoval: Percentiles
    var signInsDuringRemoval: Percentiles
    var signInsMeasured: Int
}

extension Duration {
    var inSeconds: Double { inMilliseconds / 1000 }
}
