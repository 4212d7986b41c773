import CountersignCore
import Foundation
import Journeys
import Testing

@testable import CountersignServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Integration code: a handler per journey for the browser, Swift and Android SDKs, that parses and keeps journey data in its place")
struct IntegrationCodeTests {
    /// Every journey the server ships, development ones included, and whether it starts only from a push.
    static func shippedJourneys() throws -> [(journey: JourneyDefinition, startsFromPush: Bool)] {
        let registry = try JourneyRegistry.load(directory: nil, development: true)
        return registry.all.map { ($0, registry.mobileApproveJourneyIDs.contains($0.id)) }
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-integration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("the JavaScript of every shipped journey parses as an ES module (node --check)")
    func javaScriptParses() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let shipped = try Self.shippedJourneys()
        #expect(!shipped.isEmpty)
        for (journey, startsFromPush) in shipped {
            let code = IntegrationCode.generate(for: journey, in: .javascript, startsFromPush: startsFromPush)
            #expect(code.language == .javascript && code.filename == "\(journey.id).js")
            let file = directory.appendingPathComponent("\(journey.id).mjs")
            try code.code.write(to: file, atomically: true, encoding: .utf8)
            let checked = try await CommandLineTool.run("node", ["--check", file.path])
            #expect(checked.status == 0, "node --check \(code.filename) exited \(checked.status):\n\(checked.output)\n\(code.code)")
        }
    }

    @Test("the Swift of every shipped journey parses (swiftc -parse)")
    func swiftParses() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var files: [String] = []
        for (journey, startsFromPush) in try Self.shippedJourneys() {
            let code = IntegrationCode.generate(for: journey, in: .swift, startsFromPush: startsFromPush)
            #expect(code.language == .swift && code.filename.hasSuffix("Journey.swift"))
            let file = directory.appendingPathComponent(code.filename)
            #expect(!FileManager.default.fileExists(atPath: file.path), "two journeys' Swift share the name \(code.filename)")
            try code.code.write(to: file, atomically: true, encoding: .utf8)
            files.append(file.path)
        }
        // One run for all: the output names the file of any error.
        let checked = try await CommandLineTool.run("swiftc", ["-parse"] + files)
        #expect(checked.status == 0, "swiftc -parse exited \(checked.status):\n\(checked.output)")
    }

    @Test("each language has a case per step the journey can show, answered with the SDK's calls and the step's fields")
    func casesPerStep() throws {
        let journeys = Dictionary(try Self.shippedJourneys().map { ($0.journey.id, $0) }, uniquingKeysWith: { first, _ in first })
        let webLogin = try #require(journeys["web_login"])
        let javaScript = IntegrationCode.generate(for: webLogin.journey, in: .javascript, startsFromPush: false).code
        #expect(javaScript.contains("switch (response.journeyStepId) {"))
        #expect(javaScript.contains("case 'login': {"))
        #expect(javaScript.contains("response = await submitClientResponse(ClientResponseOptionType.ClientInput, { email });"))
        #expect(javaScript.contains("case JourneyStepId.MobileApproveAuthentication: {"))
        #expect(javaScript.contains("await waitForMobileApproval(response, "))
        #expect(javaScript.contains("case JourneyStepId.Success:") && javaScript.contains("case JourneyStepId.Rejection:"))
        #expect(javaScript.contains("default:"))
        #expect(javaScript.contains("await startJourney('web_login')"))

        let swift = IntegrationCode.generate(for: webLogin.journey, in: .swift, startsFromPush: false)
        #expect(swift.filename == "WebLoginJourney.swift")
        #expect(swift.code.contains("case \"login\":"))
        #expect(swift.code.contains("data: [\"email\": .string(answer.email)]"))
        #expect(swift.code.contains("case JourneyStepID.mobileApproveAuthentication:"))

        let kotlin = IntegrationCode.generate(for: webLogin.journey, in: .kotlin, startsFromPush: false)
        #expect(kotlin.filename == "WebLoginJourney.kt")
        #expect(kotlin.code.contains("package com.example.countersign.web_login\n"))
        #expect(kotlin.code.contains("\"login\" -> {"))
        #expect(kotlin.code.contains(".put(\"email\", answer.email)"))

        // A phone's journeys sign with the Authenticator; a push journey starts from the push.
        let registration = try #require(journeys["mobile_registration"])
        let registers = IntegrationCode.generate(for: registration.journey, in: .swift, startsFromPush: false).code
        #expect(registers.contains("authenticator.registerNativeBiometrics(userIdentifier: user)"))
        #expect(registers.contains("authenticator.registerDevice("))
        #expect(registers.contains("authenticator.keepRegisteredKeys(userIdentifier: registeredUser)"))
        #expect(registers.contains("[\"enrollment_code\": .string(code)]"))
        let approve = try #require(journeys["mobile_approve_transaction"])
        #expect(approve.startsFromPush)
        let approves = IntegrationCode.generate(for: approve.journey, in: .kotlin, startsFromPush: true).code
        #expect(approves.contains("client.startMobileApproveJourney(payload, deviceId, authenticator)"))
        #expect(approves.contains("authenticator.approvalNativeBiometrics(user, transaction, nonce, challenge)"))

        // Every language has a case for every step id the plan finds.
        for (journey, startsFromPush) in journeys.values {
            let plan = IntegrationPlan(journey, startsFromPush: startsFromPush)
            let codes = Dictionary(uniqueKeysWithValues: IntegrationLanguage.allCases.map {
                ($0, IntegrationCode.generate(for: journey, in: $0, startsFromPush: startsFromPush).code)
            })
            for presented in plan.cases {
                let label = JavaScriptIntegration.stepConstant(presented.kind) ?? CodeText.javaScriptString(presented.id)
                #expect(codes[.javascript]?.contains("case \(label): {") == true, "\(journey.id): \(presented.id)")
                let swiftLabel = SwiftIntegration.stepConstant(presented.kind) ?? CodeText.swiftString(presented.id)
                #expect(codes[.swift]?.contains("case \(swiftLabel):") == true, "\(journey.id): \(presented.id)")
                let kotlinLabel = KotlinIntegration.stepConstant(presented.kind) ?? CodeText.kotlinString(presented.id)
                #expect(codes[.kotlin]?.contains("\(kotlinLabel) -> {") == true, "\(journey.id): \(presented.id)")
            }
        }
    }

    /// Text written to break out of a string literal, a comment or a template in any of the languages.
    static let hostile = "x'\"`${injected()}*/ injected(); /* \\ \n injected();\r\u{2028}\u{2029}\u{85}\u{202E} $injected \"\"\" </script> \\(injected()) #{injected}"

    /// A YAML double-quoted scalar holding `text`, everything outside printable ASCII escaped.
    static func yamlQuoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22: result += "\\\""
            case 0x5C: result += "\\\\"
            case 0x20...0x7E: result.unicodeScalars.append(scalar)
            default: result += String(format: "\\U%08X", scalar.value)
            }
        }
        return result + "\""
    }

    /// A journey whose name, form id, field names, field title and branch id are `hostile`, loaded as the
    /// server loads any journey file.
    static func hostileJourney() throws -> JourneyDefinition {
        let text = yamlQuoted(hostile)
        let yaml = """
            id: hostile_names
            name: \(text)
            steps:
              - id: ask
                type: login_form
                config:
                  form_id: \(text)
                  schema:
                    type: object
                    required: [\(text)]
                    properties:
                      \(text): {type: string, title: \(text)}
                      class: {type: integer}
                      response: {type: boolean}
                      "9 lives": {type: number}
                next: sign
                branches:
                  \(text): {next: done, display_name: \(text), schema: {type: object, properties: {\(text): {type: string}}}}
              - id: sign
                type: mobile_biometrics_authentication
                next: done
              - id: done
                type: complete
            """
        return try JourneyLoader.parse(yaml: yaml, file: "hostile_names.yaml").get()
    }

    @Test("a form id, field name, branch id or journey name with quotes, */, newlines, backticks or ${ stays inside its literal or comment")
    func hostileNames() async throws {
        let journey = try Self.hostileJourney()
        #expect(journey.step("ask")?.config["form_id"]?.stringValue == Self.hostile, "the loader keeps the text as written")
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The literals the hostile text may appear in, as each language escapes it.
        let literals: [IntegrationLanguage: String] = [
            .javascript: CodeText.javaScriptString(Self.hostile), .swift: CodeText.swiftString(Self.hostile), .kotlin: CodeText.kotlinString(Self.hostile),
        ]
        for language in IntegrationLanguage.allCases {
            let code = IntegrationCode.generate(for: journey, in: language, startsFromPush: false).code
            #expect(code.contains(literals[language] ?? "?"), "\(language): the form id is a case label")
            // No line terminator but \n, no control or bidirectional-override character anywhere.
            let stray = code.unicodeScalars.filter { $0 != "\n" && ($0.value < 0x20 || $0.value == 0x7F || [0x85, 0x2028, 0x2029, 0x202E].contains($0.value)) }
            #expect(stray.isEmpty, "\(language): \(stray.map { String($0.value, radix: 16) })")
            for line in code.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("//") {
                    // A line comment ends only at its line's end, and opens or closes no block comment.
                    #expect(!trimmed.contains("*/") && !trimmed.contains("/*"), "\(language): \(line)")
                    continue
                }
                // On a line of code, the hostile text appears only as its escaped literal (or, made a name, as
                // letters, digits and underscores): never as a call.
                let outsideLiterals = line.replacingOccurrences(of: literals[language] ?? "?", with: "\"\"")
                for canary in ["injected(", "injected;", "$injected", "{injected"] {
                    #expect(!outsideLiterals.contains(canary), "\(language): \(line)")
                }
            }
            // Identifiers made of journey data are plain names.
            if language == .javascript {
                #expect(code.contains("export async function runHostileNames(clientId, ui, authenticator, userIdentifier) {"))
            }
        }

        let javaScript = IntegrationCode.generate(for: journey, in: .javascript, startsFromPush: false)
        let swift = IntegrationCode.generate(for: journey, in: .swift, startsFromPush: false)
        #expect(swift.code.contains("var class_: Int"), "a keyword gets a _")
        #expect(swift.code.contains("var _9Lives: Double?"), "a name does not start with a digit")
        let jsFile = directory.appendingPathComponent("hostile.mjs")
        try javaScript.code.write(to: jsFile, atomically: true, encoding: .utf8)
        let node = try await CommandLineTool.run("node", ["--check", jsFile.path])
        #expect(node.status == 0, "node --check exited \(node.status):\n\(node.output)\n\(javaScript.code)")
        let swiftFile = directory.appendingPathComponent(swift.filename)
        try swift.code.write(to: swiftFile, atomically: true, encoding: .utf8)
        let swiftc = try await CommandLineTool.run("swiftc", ["-parse", swiftFile.path])
        #expect(swiftc.status == 0, "swiftc -parse exited \(swiftc.status):\n\(swiftc.output)\n\(swift.code)")
    }

    @Test("literals escape what would end them or read as code; names are [A-Za-z0-9_] and no keyword")
    func escaping() {
        #expect(CodeText.javaScriptString("a'b\\c\n${d}") == "'a\\'b\\\\c\\u{A}${d}'")
        #expect(CodeText.swiftString("a\"b\\(c)\u{2028}") == "\"a\\\"b\\\\(c)\\u{2028}\"")
        #expect(CodeText.kotlinString("a\"$b\\c\u{1F600}") == "\"a\\\"\\$b\\\\c\\uD83D\\uDE00\"")
        #expect(CodeText.comment("a\nb*/c/*d\u{2028}e\u{202E}f") == "a?b* /c/ *d?e?f")
        #expect(CodeName.sanitized("first-name", fallback: "f") == "first_name")
        #expect(CodeName.sanitized("1st", fallback: "f") == "_1st")
        #expect(CodeName.sanitized("--", fallback: "f") == "f")
        #expect(CodeName.lowerCamel("email_form", fallback: "f") == "emailForm")
        #expect(CodeName.upperCamel("web_login", fallback: "F") == "WebLogin")
        var names = NameAllocator(reserved: ["class"])
        #expect(names.claim("class") == "class_")
        #expect(names.claim("class") == "class_2")
        #expect(names.claim("email") == "email")
    }
}

/// Runs a program found on the `PATH` to its end, what it prints and its errors in one text. Through
/// `posix_spawnp`, not Foundation's `Process`, which on Linux can crash a test process that holds many
/// descriptors (see `ChildProcess` in the CLI tests); and on a thread of its own, so that the wait blocks
/// none of the tests' tasks.
enum CommandLineTool {
    struct Result: Sendable {
        let status: Int32
        let output: String
    }

    struct NotStarted: Error, CustomStringConvertible {
        let program: String
        let code: Int32
        var description: String { "\(program) could not be started: \(String(cString: strerror(code)))" }
    }

    static func run(_ program: String, _ arguments: [String]) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Swift.Result { try runWaiting(program, arguments) })
            }
        }
    }

    private static func runWaiting(_ program: String, _ arguments: [String]) throws -> Result {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-tool-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        let environment: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            environment.forEach { free($0) }
        }
        var pid = pid_t()
        let started = posix_spawnp(&pid, program, &actions, nil, argv, environment)
        guard started == 0 else { throw NotStarted(program: program, code: started) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw NotStarted(program: program, code: errno) }
        }
        // WIFEXITED and WEXITSTATUS, which are C macros.
        let signal = status & 0x7F
        let exitStatus = signal == 0 ? (status >> 8) & 0xFF : 128 + signal
        return Result(status: exitStatus, output: (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }
}
