import CountersignClient
import CountersignCore
import Foundation
import JWTKit
import SimulatedPhone

/// Which web journey the browsers run, and what they send to it.
enum BenchJourney: String, CaseIterable, Sendable {
    /// Number matching: the phone types the code the browser shows.
    case login = "web_login"
    case biometricOnly = "web_login_biometric_only"
    case payment = "web_transaction_signing"

    /// Whether the browser shows a code the phone must type.
    var showsCode: Bool { self == .login }

    func form(email: String, flow: Int) -> JSONValue {
        switch self {
        case .login, .biometricOnly: ["email": .string(email)]
        case .payment:
            ["email": .string(email), "amount": .string("\(100 + flow % 900)"), "currency": "EUR", "payee": .string("Merchant \(flow % 50)")]
        }
    }
}

/// One complete web-to-mobile flow, as measured.
struct FlowSample: Sendable {
    /// From the browser's start call to its `action:success` with a verified token.
    var flow: Duration
    /// From the moment the phone sends its completing answer to the browser holding its token.
    var resume: Duration
}

/// A browser and the phone of its user. Each pair runs one flow at a time, so the phone knows whose
/// code to type and the browser knows when its phone answered.
final class Pair: Sendable {
    let email: String
    let phone: SimulatedPhone
    /// Codes the browser shows, handed to the phone (the person reading them off the screen).
    let codes: AsyncStream<String>
    let showCode: AsyncStream<String>.Continuation
    /// When the phone sent its completing answer, handed to the browser.
    let answered: AsyncStream<ContinuousClock.Instant>
    let phoneAnswered: AsyncStream<ContinuousClock.Instant>.Continuation

    init(email: String, phone: SimulatedPhone) {
        self.email = email
        self.phone = phone
        (codes, showCode) = AsyncStream.makeStream(of: String.self)
        (answered, phoneAnswered) = AsyncStream.makeStream(of: ContinuousClock.Instant.self)
    }

    /// The phone: waits on its inbox (long-poll) and approves every request, typing the browser's
    /// code when asked. Runs until cancelled.
    func answerRequests() async {
        var codeIterator = codes.makeAsyncIterator()
        while !Task.isCancelled {
            do {
                for payload in try await phone.pending(wait: 30) {
                    let opened = try await phone.open(payload)
                    let code = opened.journeyStepID == JourneyStepID.otpValidation ? await codeIterator.next() : nil
                    phoneAnswered.yield(.now)
                    _ = try await phone.approve(from: opened, otp: code)
                }
            } catch {
                // A refused answer (say, an approval that expired during warm-up) is the browser's error to count.
                if Task.isCancelled { return }
            }
        }
    }
}

/// Drives complete flows through browsers and phones against one server.
struct FlowBenchmark: Sendable {
    let server: URL
    let transport: PooledTransport
    let journey: BenchJourney
    let polling: Bool
    let keys: JWTKeyCollection

    /// A browser of the web client, which keeps across its flows the browser credential its first sign-in
    /// hands out, as the browser SDK keeps it in `localStorage`.
    func browser() -> OrchestrationClient {
        OrchestrationClient(baseURL: server, clientID: "demo-web", transport: transport)
    }

    /// The browser side of one flow; throws when any step is not what the protocol promises.
    func run(_ pair: Pair, in browser: OrchestrationClient, flow: Int) async throws -> FlowSample {
        let started = ContinuousClock.now
        _ = try await browser.startJourney(journey.rawValue)
        let waiting = try await browser.submitClientResponse(.clientInput, data: journey.form(email: pair.email, flow: flow))
        guard waiting.journeyStepID == JourneyStepID.mobileApproveAuthentication, waiting.data?["devices"] == nil,
            let token = waiting.interactionToken
        else {
            throw BenchError.unexpectedStep(SimulatedPhone.describe(waiting))
        }
        if journey.showsCode {
            guard let code = waiting.data?["otp"]?.stringValue else { throw BenchError.protocolViolation("no web OTP to show") }
            pair.showCode.yield(code)
        }
        var done: IdoResponse
        if polling {
            guard case .number(let seconds) = waiting.data?["polling_interval"] else {
                throw BenchError.protocolViolation("no polling_interval")
            }
            let interval = Duration.seconds(seconds)
            repeat {
                try await Task.sleep(for: interval)
                done = try await browser.submitClientResponse(.clientInput, data: [:])
            } while done.journeyStepID == JourneyStepID.mobileApproveAuthentication && done.error == nil
        } else {
            try await transport.waitForApprovalEvent(server: server, interactionID: waiting.interactionID, token: token)
            done = try await browser.submitClientResponse(.clientInput, data: [:])
        }
        guard done.journeyStepID == JourneyStepID.success, let signed = done.token else {
            throw BenchError.unexpectedStep(SimulatedPhone.describe(done))
        }
        let claims = try await keys.verify(signed, as: FlowClaims.self)
        guard claims.device_id == pair.phone.profile.deviceID else {
            throw BenchError.protocolViolation("the token names device \(claims.device_id)")
        }
        let resumed = ContinuousClock.now
        var answered = pair.answered.makeAsyncIterator()
        let phoneAnswered = await answered.next() ?? resumed
        return FlowSample(flow: resumed - started, resume: resumed - phoneAnswered)
    }

    /// Registers `count` phones, one per new user, through the development server's
    /// `mobile_registration_by_email`.
    static func registerPhones(_ count: Int, server: URL, transport: PooledTransport, directory: URL) async throws -> [Pair] {
        // Users of earlier runs keep their phones; new users keep each browser to one phone, without a choice.
        let run = UUID().uuidString.prefix(8).lowercased()
        return try await withThrowingTaskGroup(of: Pair.self) { group in
            for index in 0..<count {
                group.addTask {
                    let email = "bench-\(run)-\(index)@example.com"
                    let phoneDirectory = directory.appendingPathComponent("phone-\(index)")
                    let profile = try await SimulatedPhone.register(
                        server: server.absoluteString, clientID: "demo-native", enrollment: .email(email), name: "Bench phone \(index)",
                        directory: phoneDirectory, transport: transport)
                    return Pair(email: email, phone: try SimulatedPhone(profile: profile, directory: phoneDirectory, transport: transport))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }
}

/// The claims the benchmark checks in every token (the signature is verified against the JWKS).
struct FlowClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var device_id: String

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}
