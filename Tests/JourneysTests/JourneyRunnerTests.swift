import CountersignCore
import Foundation
import Journeys
import Synchronization
import Testing

/// In-memory effects: the runner's only contact with the world. These journeys ask for no approval: a
/// call for one fails the test (`UnexpectedEffects`).
final class MemoryEffects: UnexpectedEffects, @unchecked Sendable {
    let users = Mutex<[UserContext]>([])
    let issued = Mutex<[TokenRequest]>([])
    /// Biometric keys by public key id.
    let keys = Mutex<[String: BiometricCredential]>([:])
    let signatures = Mutex<[TransactionSignature]>([])

    override func findUser(externalUserID: String) async throws -> UserContext? {
        users.withLock { $0.first { $0.externalUserID == externalUserID } }
    }
    override func createUser(externalUserID: String, email: String?) async throws -> UserContext? {
        let user = UserContext(userID: "usr_\(externalUserID)", externalUserID: externalUserID, email: email)
        users.withLock { $0.append(user) }
        return user
    }
    /// Enrollment codes the tests issued: code → external user id.
    let enrollmentCodes = Mutex<[String: String]>([:])

    override func redeemEnrollmentCode(_ code: String) async throws -> UserContext? {
        guard let externalUserID = enrollmentCodes.withLock({ $0.removeValue(forKey: code) }) else { return nil }
        if let user = try await findUser(externalUserID: externalUserID) { return user }
        return try await createUser(externalUserID: externalUserID, email: nil)!
    }
    override func issueEnrollmentCode(for user: UserContext, lifetime: TimeInterval) async throws -> IssuedEnrollmentCode? {
        IssuedEnrollmentCode(id: "enr_1", code: "CODE", expiresAt: Date(timeIntervalSinceNow: lifetime), enrollmentURI: "countersign://enroll", qrCodeSVG: "<svg/>")
    }
    override func withdrawEnrollmentCode(_ id: String) async throws {}
    override func storeBiometricKeys(_ keys: [BiometricKeyRegistration], onDevice deviceID: String?) async throws {}
    override func activeBiometricKey(externalUserID: String, publicKeyID: String) async throws -> BiometricCredential? {
        keys.withLock { $0[publicKeyID] }.flatMap { $0.user.externalUserID == externalUserID ? $0 : nil }
    }
    override func recordTransactionSignature(_ signature: TransactionSignature) async throws -> String {
        signatures.withLock { $0.append(signature) }
        return "evd_\(signatures.withLock { $0.count })"
    }
    override func registerDevice(_ registration: DeviceRegistration) async throws -> String { "dev_1" }
    override func issueToken(_ request: TokenRequest) async throws -> String {
        issued.withLock { $0.append(request) }
        return "token-for-\(request.user.userID)"
    }
    /// The users whose browsers a run's success remembered.
    let rememberedBrowsers = Mutex<[String]>([])
    override func rememberBrowser(of user: UserContext) async throws -> String {
        rememberedBrowsers.withLock { $0.append(user.userID) }
        return "browser-of-\(user.userID)"
    }
}

@Suite("The journey runner")
struct JourneyRunnerTests {
    static let journey = """
        id: runner
        steps:
          - id: login
            type: login_form
            config:
              form_id: login
              schema: {type: object, required: [username], properties: {username: {type: string}}}
            next: create
            cancel: cancelled
            branches: {help: explain}
          - id: create
            type: create_user
            config: {username: "@login.username", output_variable: found}
            next: done
            branches: {user_exists: welcome_back}
          - id: done
            type: complete
          - id: welcome_back
            type: reject
            config:
              error_code: user_exists
              data:
                name: "@policy.userContext().external_user_id"
                source: "@policy.request().params.source"
                literal: "@@home"
                by_step: "@create.user_id"
                by_variable: "@found.user_id"
          - id: explain
            type: reject
            config: {error_code: help_requested}
          - id: cancelled
            type: reject
            config: {error_code: cancelled_by_user}
        """

    func run(_ answers: [ClientResponse], effects: MemoryEffects = MemoryEffects()) async throws -> StepPresentation {
        let journey = try JourneyLoader.parse(yaml: Self.journey, file: "runner.yaml").get()
        let runner = JourneyRunner(journey: journey, effects: effects, now: Date())
        var state = InteractionState(journeyID: journey.id, clientID: "web", requestParams: ["source": "tests"])
        var presentation = try await runner.start(&state)
        for answer in answers { presentation = try await runner.submit(answer, to: &state) }
        return presentation
    }

    @Test("a form answer flows through create_user into a token for the new user")
    func createsUser() async throws {
        let effects = MemoryEffects()
        let done = try await run([ClientResponse(option: "client_input", data: ["username": "Ada"])], effects: effects)
        #expect(done.journeyStepID == JourneyStepID.success)
        #expect(done.token == "token-for-usr_Ada")
        #expect(effects.issued.withLock { $0.first?.clientID } == "web")
    }

    @Test("an existing user takes the user_exists branch, with the step's output under its id and its output_variable; reject data resolves expressions")
    func userExists() async throws {
        let effects = MemoryEffects()
        _ = try await effects.createUser(externalUserID: "Ada", email: nil)
        let rejected = try await run([ClientResponse(option: "client_input", data: ["username": "Ada"])], effects: effects)
        #expect(rejected.journeyStepID == JourneyStepID.rejection)
        #expect(rejected.error?.code == "user_exists")
        #expect(rejected.data == [
            "name": "Ada", "source": "tests", "literal": "@home", "by_step": "usr_Ada", "by_variable": "usr_Ada",
        ])
    }

    @Test("a web run's success remembers the browser only when it ends as the user who approved on the phone in it")
    func remembersTheApprovingUsersBrowser() async throws {
        let journey = try JourneyLoader.parse(yaml: "id: done\nsteps:\n  - id: done\n    type: complete\n", file: "done.yaml").get()
        for approver in ["usr_Bo", "usr_Ada"] {
            let effects = MemoryEffects()
            var state = InteractionState(journeyID: journey.id, clientID: "web")
            state.user = UserContext(userID: "usr_Bo", externalUserID: "Bo", email: nil)
            state.approvedOnPhoneBy = approver
            let done = try await JourneyRunner(journey: journey, effects: effects, now: Date()).start(&state)
            #expect(done.journeyStepID == JourneyStepID.success)
            let remembered = approver == "usr_Bo"
            #expect(effects.rememberedBrowsers.withLock { $0 } == (remembered ? ["usr_Bo"] : []))
            #expect((done.data?["browser_credential"] != nil) == remembered)
        }
    }

    @Test("custom branches are offered and followed; cancel follows the cancel branch")
    func branches() async throws {
        let journey = try JourneyLoader.parse(yaml: Self.journey, file: "runner.yaml").get()
        var state = InteractionState(journeyID: journey.id, clientID: "web")
        let first = try await JourneyRunner(journey: journey, effects: MemoryEffects(), now: Date()).start(&state)
        #expect(first.options["help"]?.type == .custom)
        #expect(try await run([ClientResponse(option: "help")]).error?.code == "help_requested")
        #expect(try await run([ClientResponse(option: "cancel")]).error?.code == "cancelled_by_user")
    }

    @Test("during an upgrade the tries go on being counted across releases: a state of the release before (tries on the current step only) keeps its count, and a new state still writes it there")
    func triesAcrossReleases() async throws {
        let journey = try JourneyLoader.parse(yaml: """
            id: code_tries
            steps:
              - id: code
                type: enrollment_code
                config: {max_attempts: 2}
                next: done
                failure: wrong
              - id: done
                type: complete
              - id: wrong
                type: reject
                config: {error_code: code_refused}
            """, file: "code_tries.yaml").get()
        let runner = JourneyRunner(journey: journey, effects: MemoryEffects(), now: Date())
        var state = InteractionState(journeyID: journey.id, clientID: "native")
        _ = try await runner.start(&state)
        let wrong = ClientResponse(option: "client_input", data: ["enrollment_code": "WRONG"])
        #expect(try await runner.submit(wrong, to: &state).error?.code == ErrorCode.invalidCredentials)

        // What an instance of the release before reads: the step's tries on the current step.
        let written = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(state)) as? [String: Any])
        #expect((written["current"] as? [String: Any])?["failedAttempts"] as? Int == 1)
        // What it writes: no count by step.
        var previousRelease = written
        previousRelease["failedAttemptsByStep"] = nil
        var carried = try JSONDecoder().decode(InteractionState.self, from: JSONSerialization.data(withJSONObject: previousRelease))
        #expect(try await runner.submit(wrong, to: &carried).error?.code == "code_refused")
    }

    @Test("the failure option without a failure branch rejects the journey")
    func failureOption() async throws {
        let rejected = try await run([ClientResponse(option: "failure", data: ["message": "sensor broken"])])
        #expect(rejected.journeyStepID == JourneyStepID.rejection)
        #expect(rejected.error?.code == "client_failure")
    }

    @Test("answers the step does not accept leave the run unchanged", arguments: [
        ClientResponse(option: "resend"), ClientResponse(option: "client_input", data: ["username": 5]),
        ClientResponse(option: "client_input"),
    ])
    func refusals(answer: ClientResponse) async throws {
        let journey = try JourneyLoader.parse(yaml: Self.journey, file: "runner.yaml").get()
        let runner = JourneyRunner(journey: journey, effects: MemoryEffects(), now: Date())
        var state = InteractionState(journeyID: journey.id, clientID: "web")
        _ = try await runner.start(&state)
        await #expect(throws: ClientResponseNotValid.self) { _ = try await runner.submit(answer, to: &state) }
        #expect(state.current?.stepID == "login")
    }
}
