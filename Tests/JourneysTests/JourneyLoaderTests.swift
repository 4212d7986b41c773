import CountersignCore
import Foundation
import Journeys
import Testing

@Suite("Journey documents: loading and validation")
struct JourneyLoaderTests {
    static let valid = """
        id: sample
        steps:
          - id: login
            type: login_form
            config:
              form_id: login
              schema: {type: object, required: [email], properties: {email: {type: string}}}
            next: create
          - id: create
            type: create_user
            config: {email: "@login.email"}
            next: done
            branches: {user_exists: done}
          - id: done
            type: complete
        """

    func problems(_ yaml: String) -> [JourneyValidationError] {
        switch JourneyLoader.parse(yaml: yaml, file: "sample.yaml") {
        case .success: []
        case .failure(let error): error.problems
        }
    }

    @Test("a journey that reads what a push carries, anywhere in a step's configuration, is known for it: it starts only from a push")
    func readsWhatAPushCarries() throws {
        let nested = """
            id: approve_nested
            steps:
              - id: sign
                type: mobile_biometrics_transaction_signing
                config:
                  external_user_id: "@@not-an-expression"
                  approval_data: {details: [{payee: "@policy.getMobileApproveParameters().approval_data.payee"}]}
                next: done
              - id: done
                type: complete
            """
        #expect(try JourneyLoader.parse(yaml: nested, file: "approve_nested.yaml").get().readsMobileApproveParameters)
        #expect(try JourneyLoader.parse(yaml: Self.valid, file: "sample.yaml").get().readsMobileApproveParameters == false)
    }

    @Test("every web journey a production start loads that asks a phone has the phone type the browser's code, or sign the details it shows (which its token then carries)")
    func noWeakerWebJourneyInProduction() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("journeys")
        let pushing = try JourneyLoader.load(directory: directory).flatMap { journey in
            journey.steps.filter { $0.type == .webToMobileAuthentication }.map { (journey.id, $0) }
        }
        #expect(pushing.count >= 3)
        for (journeyID, step) in pushing {
            #expect(step.config["display_web_otp"] == .bool(true) || step.config["approval_data"] != nil, "\(journeyID)")
        }
    }

    @Test("a valid document loads")
    func validDocument() throws {
        let journey = try JourneyLoader.parse(yaml: Self.valid, file: "sample.yaml").get()
        #expect(journey.id == "sample")
        #expect(journey.start == "login")
        #expect(journey.steps.map(\.id) == ["login", "create", "done"])
    }

    @Test("the shipped templates are valid")
    func templates() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("journeys")
        let ids = try JourneyLoader.load(directory: directory).map(\.id)
        #expect(ids.contains("mobile_registration"))
        #expect(ids.contains("mobile_login"))
        #expect(!ids.contains("mobile_registration_by_email"), "development journeys load only in development")
        #expect(try JourneyLoader.load(directory: directory, development: true).map(\.id).contains("mobile_registration_by_email"))
    }

    @Test("each rule refuses a bad document with the file, the step and the reason", arguments: [
        ("unknown step type", "type: complete", "type: teleport", "done", "unknown step type 'teleport'"),
        ("dangling branch", "next: done\n    branches", "next: nowhere\n    branches", "create", "unknown step 'nowhere'"),
        ("missing required config", "form_id: login\n", "", "login", "missing required config 'form_id'"),
        ("missing one-of config", "config: {email: \"@login.email\"}", "config: {}", "create", "config needs one of"),
        ("unreachable step", "next: create", "next: done", "create", "unreachable"),
        ("bad expression syntax", "\"@login.email\"", "\"@login..email\"", "create", "bad expression"),
        ("unknown policy function", "\"@login.email\"", "\"@policy.secrets().x\"", "create", "unknown function"),
        ("expression reads unknown step", "\"@login.email\"", "\"@nobody.email\"", "create", "not a step or output variable of this journey"),
        ("missing next", "    next: done\n    branches", "    branches", "create", "missing 'next'"),
        ("next on a terminal step", "type: complete", "type: complete\n    next: login", "done", "takes no 'next'"),
        ("unknown key", "type: complete", "type: complete\n    nxt: login", "done", "unknown key 'nxt'"),
        ("reserved branch id", "user_exists: done", "cancel: done", "create", "reserved"),
        ("bad schema", "email: {type: string}", "email: {type: date}", "login", "bad 'schema'"),
        // A schema keyword the checks would pass over leaves every field optional, or unchecked.
        ("required not a list", "required: [email]", "required: email", "login", "'required' must be a list"),
        ("misspelt schema keyword", "required: [email]", "requried: [email]", "login", "unknown keyword 'requried'"),
        ("misspelt property keyword", "email: {type: string}", "email: {type: string, fromat: email}", "login", "unknown keyword 'fromat'"),
        ("unknown format", "email: {type: string}", "email: {type: string, format: e-mail}", "login", "the only format is 'email'"),
    ])
    func rule(name: String, find: String, replace: String, stepID: String, reason: String) {
        let yaml = Self.valid.replacingOccurrences(of: find, with: replace)
        #expect(yaml != Self.valid, "the substitution for \(name) must apply")
        let found = problems(yaml)
        #expect(found.contains { $0.stepID == stepID && $0.reason.contains(reason) && $0.file == "sample.yaml" }, "\(name): \(found)")
    }

    @Test("a misspelt config key, a switch written as a string, left empty or wrapped, or a limit written as words is refused: no protection may quietly go to its default", arguments: [
        ("display_web_opt: true", "unknown config 'display_web_opt' for a web_to_mobile_authentication step"),
        ("display_web_otp: \"true\"", "config 'display_web_otp' must be true, false or an expression"),
        ("one_pending_per_user: \"no\"", "config 'one_pending_per_user' must be true, false or an expression"),
        // Left empty, or an expression inside a list or a mapping: read as off before.
        ("display_web_otp: null", "config 'display_web_otp' must be true, false or an expression"),
        ("display_web_otp: [\"@login.email\"]", "config 'display_web_otp' must be true, false or an expression"),
        ("show_device_names: {on: \"@login.email\"}", "config 'show_device_names' must be true, false or an expression"),
        // A limit written as words would run at its default.
        ("rings_per_hour: ten", "config 'rings_per_hour' must be a number or an expression"),
        ("backoff_seconds: \"60\"", "config 'backoff_seconds' must be a number or an expression"),
        ("device_selection: newest", "config 'device_selection' must be one of: ask, most_recent"),
    ])
    func misspeltProtection(line: String, reason: String) {
        // The sample with its create step turned into a web-to-mobile step carrying `line`.
        func sample(with line: String) -> String {
            Self.valid.replacingOccurrences(
                of: "type: create_user\n    config: {email: \"@login.email\"}\n    next: done\n    branches: {user_exists: done}",
                with: "type: web_to_mobile_authentication\n    config: {external_user_id: \"@login.email\", mobile_journey: mobile_approve_otp, \(line)}\n    next: done")
        }
        let found = problems(sample(with: line))
        #expect(sample(with: line) != Self.valid)
        #expect(found.contains { $0.stepID == "create" && $0.reason.contains(reason) }, "\(found)")
        #expect(problems(sample(with: "display_web_otp: \"@policy.request().params.otp\"")).isEmpty, "an expression may decide a switch")
    }

    @Test("a mobile_journey that is no journey's name is refused, rather than the weaker mobile_approve run in its place", arguments: [
        "[mobile_approve_otp]", "{id: mobile_approve_otp}", "3",
    ])
    func mobileJourneyNotAName(value: String) {
        let yaml = Self.valid.replacingOccurrences(
            of: "type: create_user\n    config: {email: \"@login.email\"}\n    next: done\n    branches: {user_exists: done}",
            with: "type: web_to_mobile_authentication\n    config: {external_user_id: \"@login.email\", mobile_journey: \(value)}\n    next: done")
        #expect(yaml != Self.valid)
        let found = problems(yaml)
        #expect(found.contains { $0.stepID == "create" && $0.reason.contains("config 'mobile_journey' must name a journey") }, "\(found)")
    }

    /// A way out of a step: `next`, `failure` or `cancel`, to `target`.
    typealias Way = (step: String, way: String, target: String)

    @Test("a ring of steps that pass the run on without the client is refused, naming its steps: a run entering it would never stop", arguments: [
        // `create_user` never waits: two that lead to each other.
        ([("create", "next", "again"), ("again", "next", "create")], "create", "steps create → again → create"),
        // A web-to-mobile step fails at once for a user without a phone, and its failure leads back.
        ([("create", "next", "push"), ("push", "failure", "create")], "create", "steps create → push → create"),
        // A step whose failure leads to itself.
        ([("push", "failure", "push")], "push", "steps push → push"),
        // `complete` fails at once for a user the run only named (`create` found them), and its failure leads back.
        ([("done", "failure", "create")], "create", "steps create → done → create"),
    ] as [([Way], String, String)])
    func ringWithoutClient(ways: [Way], stepID: String, reason: String) {
        let found = problems(Self.journey(with: ways))
        #expect(found.contains { $0.stepID == stepID && $0.reason.contains(reason) }, "\(found)")
        #expect(found.count == 1, "one ring, named once: \(found)")
    }

    @Test("a chain of create_user steps longer than a run passes through without the client is refused at load, not failed at run time")
    func longChainWithoutClient() async throws {
        /// `count` create_user steps in a row, then complete.
        func chain(_ count: Int) -> String {
            var yaml = "id: chain\nsteps:\n"
            for index in 0..<count {
                yaml += "  - {id: create\(index), type: create_user, config: {username: u\(index)}, next: \(index + 1 < count ? "create\(index + 1)" : "done")}\n"
            }
            return yaml + "  - {id: done, type: complete}\n"
        }
        #expect(problems(chain(63)).isEmpty, "\(problems(chain(63)))")
        // The longest chain the loader takes runs to its end.
        let journey = try JourneyLoader.parse(yaml: chain(63), file: "chain.yaml").get()
        var state = InteractionState(journeyID: journey.id, clientID: "web")
        #expect(try await JourneyRunner(journey: journey, effects: MemoryEffects(), now: Date()).start(&state).journeyStepID == JourneyStepID.success)
        let found = problems(chain(64))
        #expect(found.contains { $0.stepID == "create0" && $0.reason.contains("65 steps from here can follow one another without the client") }, "\(found)")
    }

    @Test("a way back through a step that waits for the client is no ring")
    func wayBackThroughTheClient() {
        #expect(problems(Self.journey(with: [("create", "next", "push"), ("push", "failure", "login")])).isEmpty)
        #expect(problems(Self.journey(with: [("create", "next", "push"), ("push", "cancel", "create")])).isEmpty, "a cancel comes from the client")
    }

    /// A journey of a form (`login`, whose branches reach every step), a `create_user` step (`create`; `again`, a second one, when a way names
    /// it), a web-to-mobile step (`push`), each going on to `done` unless `ways` says otherwise, and `done`.
    static func journey(with ways: [Way]) -> String {
        func line(_ id: String, _ rest: String) -> String {
            var exits = id == "done" ? [:] : ["next": "done"]
            for way in ways where way.step == id { exits[way.way] = way.target }
            let written = exits.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
            return "  - {" + (["id: \(id)", rest] + written).joined(separator: ", ") + "}"
        }
        let user = #"config: {email: "@login.email"}"#
        var steps = [
            "  - {id: login, type: login_form, config: {form_id: login, schema: {type: object, properties: {email: {type: string}}}}, next: create, branches: {phone: push, leave: done}}",
            line("create", "type: create_user, \(user)"),
        ]
        if ways.contains(where: { $0.step == "again" || $0.target == "again" }) { steps.append(line("again", "type: create_user, \(user)")) }
        steps.append(line("push", #"type: web_to_mobile_authentication, config: {external_user_id: "@login.email", mobile_journey: mobile_approve_otp}"#))
        steps.append(line("done", "type: complete"))
        return "id: sample\nsteps:\n" + steps.joined(separator: "\n")
    }

    @Test("duplicate step ids and bad YAML are refused")
    func documentLevel() {
        #expect(problems("id: x\nsteps:\n  - {id: a, type: complete}\n  - {id: a, type: complete}").contains { $0.reason == "duplicate step id" })
        #expect(problems("id: [unclosed").contains { $0.reason.contains("not valid YAML") })
        #expect(problems("steps: []").contains { $0.reason.contains("'id'") })
        #expect(problems("id: x\nsteps: []").contains { $0.reason.contains("non-empty") })
    }

    @Test("a directory reports the problems of every file")
    func directory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journeys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try "id: a\nsteps:\n  - {id: s, type: nope}".write(to: directory.appendingPathComponent("a.yaml"), atomically: true, encoding: .utf8)
        try "id: b\nsteps:\n  - {id: s, type: complete, next: t}".write(to: directory.appendingPathComponent("b.yml"), atomically: true, encoding: .utf8)
        do {
            _ = try JourneyLoader.load(directory: directory)
            Issue.record("expected problems")
        } catch {
            #expect(Set(error.problems.map(\.file)) == ["a.yaml", "b.yml"])
            #expect(error.description.contains("a.yaml: step 's': unknown step type 'nope'"))
        }
    }
}
