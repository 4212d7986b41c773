import CountersignCore
import Foundation
import Yams

/// Reads journey YAML documents and refuses any that would fail at run time (DESIGN.md §4).
///
/// ```yaml
/// id: mobile_login
/// name: Biometric login on the phone
/// steps:
///   - id: authenticate
///     type: mobile_biometrics_authentication
///     next: done
///   - id: done
///     type: complete
/// ```
public enum JourneyLoader {
    /// The subdirectory of development-only demo journeys, loaded only by a development start.
    public static let developmentDirectory = "development"

    /// Loads every `.yaml` / `.yml` file in `directory`, reporting the problems of all files at once.
    /// With `development`, the files in its `development/` subdirectory too; without, a journey marked
    /// `development_only` is refused.
    public static func load(directory: URL, development: Bool = false) throws(JourneyLoadError) -> [JourneyDefinition] {
        var files: [(name: String, url: URL)] = []
        do {
            files = try yamlFiles(in: directory).map { ($0.lastPathComponent, $0) }
        } catch {
            throw JourneyLoadError(problems: [
                JourneyValidationError(file: directory.path, stepID: nil, reason: "cannot read the directory")
            ])
        }
        let demos = directory.appendingPathComponent(developmentDirectory)
        if development, let demoFiles = try? yamlFiles(in: demos) {
            files += demoFiles.map { ("\(developmentDirectory)/\($0.lastPathComponent)", $0) }
        }
        var texts: [(name: String, text: String)] = []
        var unreadable: [JourneyValidationError] = []
        for (name, file) in files {
            if let text = try? String(contentsOf: file, encoding: .utf8) {
                texts.append((name, text))
            } else {
                unreadable.append(JourneyValidationError(file: name, stepID: nil, reason: "cannot read the file as UTF-8"))
            }
        }
        return try load(files: texts, development: development, problems: unreadable)
    }

    /// Loads journey documents given as text, each named by its path under the journeys directory; those
    /// under `development/` only with `development`.
    public static func load(files: [(name: String, text: String)], development: Bool = false) throws(JourneyLoadError) -> [JourneyDefinition] {
        try load(files: files.filter { development || !$0.name.hasPrefix(developmentDirectory + "/") }, development: development, problems: [])
    }

    private static func load(
        files: [(name: String, text: String)], development: Bool, problems unreadable: [JourneyValidationError]
    ) throws(JourneyLoadError) -> [JourneyDefinition] {
        var journeys: [JourneyDefinition] = []
        var problems = unreadable
        var fileByJourneyID: [String: String] = [:]
        for (name, text) in files {
            switch parse(yaml: text, file: name) {
            case .success(var journey):
                journey.source = (name, text)
                if journey.developmentOnly, !development {
                    problems.append(JourneyValidationError(
                        file: name, stepID: nil,
                        reason: "journey '\(journey.id)' is development_only: only a development start (countersign serve --dev) loads it"))
                } else if let other = fileByJourneyID[journey.id] {
                    problems.append(JourneyValidationError(
                        file: name, stepID: nil, reason: "journey id '\(journey.id)' is already defined in \(other)"))
                } else {
                    fileByJourneyID[journey.id] = name
                    journeys.append(journey)
                }
            case .failure(let error):
                problems += error.problems
            }
        }
        problems += linkProblems(journeys, files: fileByJourneyID)
        guard problems.isEmpty else { throw JourneyLoadError(problems: problems) }
        return journeys
    }

    private static func yamlFiles(in directory: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { ["yaml", "yml"].contains($0.pathExtension) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// Web-to-mobile steps must name a mobile journey that is loaded too.
    static func linkProblems(_ journeys: [JourneyDefinition], files: [String: String]) -> [JourneyValidationError] {
        let ids = Set(journeys.map(\.id))
        return journeys.flatMap { journey in
            journey.mobileJourneys.filter { !ids.contains($0.journeyID) }.map { link in
                JourneyValidationError(
                    file: files[journey.id] ?? journey.id, stepID: link.stepID,
                    reason: "mobile_journey '\(link.journeyID)' is not a loaded journey")
            }
        }
    }

    /// Parses and validates one document; `file` names it in error messages.
    public static func parse(yaml: String, file: String) -> Result<JourneyDefinition, JourneyLoadError> {
        let document: JSONValue
        do {
            document = try JSONValue(yamlNode: Yams.load(yaml: yaml))
        } catch {
            return .failure(JourneyLoadError(problems: [
                JourneyValidationError(file: file, stepID: nil, reason: "not valid YAML: \(error)")
            ]))
        }
        var validator = DocumentValidator(file: file)
        let journey = validator.journey(from: document)
        if let journey, validator.problems.isEmpty { return .success(journey) }
        return .failure(JourneyLoadError(problems: validator.problems))
    }
}

/// Collects every problem of one document while building its definition.
private struct DocumentValidator {
    let file: String
    var problems: [JourneyValidationError] = []

    /// `<step id>_error` holds the error of a step that took its failure branch.
    static let errorSuffix = "_error"
    static let journeyKeys: Set<String> = ["id", "name", "development_only", "start", "steps"]
    static let stepKeys: Set<String> = ["id", "type", "config", "next", "failure", "cancel", "branches"]
    static let branchKeys: Set<String> = ["next", "schema", "display_name"]
    static let reservedOptionIDs: Set<String> = ClientResponseOptionType.allCases.map(\.rawValue).reduce(into: []) {
        $0.insert($1)
    }

    mutating func problem(_ stepID: String?, _ reason: String) {
        problems.append(JourneyValidationError(file: file, stepID: stepID, reason: reason))
    }

    mutating func journey(from document: JSONValue) -> JourneyDefinition? {
        guard let top = document.objectValue else {
            problem(nil, "the document must be a mapping with 'id' and 'steps'")
            return nil
        }
        for key in top.keys.sorted() where !Self.journeyKeys.contains(key) {
            problem(nil, "unknown key '\(key)'")
        }
        guard let id = top["id"]?.stringValue, Expression.isIdentifier(id) else {
            problem(nil, "'id' must be a name of letters, digits and underscores")
            return nil
        }
        guard let rawSteps = top["steps"]?.arrayValue, !rawSteps.isEmpty else {
            problem(nil, "'steps' must be a non-empty list")
            return nil
        }
        let steps = rawSteps.enumerated().compactMap { index, raw in step(from: raw, index: index) }
        guard steps.count == rawSteps.count else { return nil }

        var seen: Set<String> = []
        for step in steps where !seen.insert(step.id).inserted {
            problem(step.id, "duplicate step id")
        }
        let start = top["start"]?.stringValue ?? steps[0].id
        if !seen.contains(start) { problem(nil, "'start' names step '\(start)', which does not exist") }
        for step in steps {
            checkConnections(of: step, stepIDs: seen)
            checkBehaviors(of: step)
        }
        checkReachability(steps: steps, start: start)
        checkRingsWithoutClient(steps: steps)
        checkChainsWithoutClient(steps: steps)
        let variables = seen.union(steps.flatMap(\.declaredVariables))
        for step in steps { checkExpressions(of: step, variables: variables) }
        var developmentOnly = false
        if let flag = top["development_only"] {
            if case .bool(let value) = flag { developmentOnly = value } else { problem(nil, "'development_only' must be true or false") }
        }
        return JourneyDefinition(id: id, name: top["name"]?.stringValue ?? id, developmentOnly: developmentOnly, start: start, steps: steps)
    }

    mutating func step(from raw: JSONValue, index: Int) -> StepDefinition? {
        guard let fields = raw.objectValue, let id = fields["id"]?.stringValue, Expression.isIdentifier(id) else {
            problem(nil, "step #\(index + 1) needs an 'id' of letters, digits and underscores")
            return nil
        }
        for key in fields.keys.sorted() where !Self.stepKeys.contains(key) {
            problem(id, "unknown key '\(key)'")
        }
        guard let typeName = fields["type"]?.stringValue else {
            problem(id, "missing 'type'")
            return nil
        }
        guard let type = StepType(rawValue: typeName) else {
            let known = StepType.allCases.map(\.rawValue).joined(separator: ", ")
            problem(id, "unknown step type '\(typeName)' (known: \(known))")
            return nil
        }
        var config: [String: JSONValue] = [:]
        if let rawConfig = fields["config"] {
            guard let object = rawConfig.objectValue else {
                problem(id, "'config' must be a mapping")
                return nil
            }
            config = object
        }
        let takes = type.behavior.configuration
        let known = Set((takes.keys + CommonStepConfig.rules).map(\.name))
        for key in config.keys.sorted() where !known.contains(key) {
            problem(id, "unknown config '\(key)' for a \(type.rawValue) step (known: \(known.sorted().joined(separator: ", ")))")
        }
        for rule in takes.keys + CommonStepConfig.rules {
            if let reason = rule.problem(with: config[rule.name]) { problem(id, reason) }
        }
        for group in takes.oneOf where !group.contains(where: { config[$0] != nil && config[$0] != .null }) {
            problem(id, "config needs one of: \(group.joined(separator: ", "))")
        }
        if let check = takes.check, let reason = check(config) { problem(id, reason) }
        var branches: [String: BranchDefinition] = [:]
        if let rawBranches = fields["branches"] {
            guard let object = rawBranches.objectValue else {
                problem(id, "'branches' must map branch ids to steps")
                return nil
            }
            for (branchID, raw) in object.sorted(by: { $0.key < $1.key }) {
                if Self.reservedOptionIDs.contains(branchID) {
                    problem(id, "branch id '\(branchID)' is reserved for a standard option")
                }
                if let branch = branch(branchID, from: raw, stepID: id) { branches[branchID] = branch }
            }
        }
        func target(_ key: String) -> String? {
            guard let value = fields[key] else { return nil }
            guard let name = value.stringValue else {
                problem(id, "'\(key)' must name a step")
                return nil
            }
            return name
        }
        return StepDefinition(
            id: id, type: type, config: config, next: target("next"), failure: target("failure"),
            cancel: target("cancel"), branches: branches)
    }

    /// A branch is written `id: step` or `id: {next: step, schema: …, display_name: …}`.
    mutating func branch(_ branchID: String, from raw: JSONValue, stepID: String) -> BranchDefinition? {
        if let target = raw.stringValue { return BranchDefinition(target: target, schema: nil, displayName: nil) }
        guard let fields = raw.objectValue, let target = fields["next"]?.stringValue else {
            problem(stepID, "branch '\(branchID)' must name a step, or be a mapping with 'next'")
            return nil
        }
        for key in fields.keys.sorted() where !Self.branchKeys.contains(key) {
            problem(stepID, "branch '\(branchID)': unknown key '\(key)'")
        }
        let schema = fields["schema"]
        if let schema, let reason = FormSchema.problem(in: schema) {
            problem(stepID, "branch '\(branchID)': bad 'schema': \(reason)")
        }
        if let name = fields["display_name"], name.stringValue == nil {
            problem(stepID, "branch '\(branchID)': 'display_name' must be a string")
        }
        return BranchDefinition(target: target, schema: schema, displayName: fields["display_name"]?.stringValue)
    }

    /// `failure_behavior` and `cancel_behavior` must agree with the step's branches, and output
    /// variables must be plain names.
    mutating func checkBehaviors(of step: StepDefinition) {
        let behaviors = [
            (key: CommonStepConfig.failureBehavior, branchValue: "failure_branch", branchKey: "failure", branch: step.failure),
            (key: CommonStepConfig.cancelBehavior, branchValue: "cancel_branch", branchKey: "cancel", branch: step.cancel),
        ]
        for (key, branchValue, branchKey, branch) in behaviors {
            guard step.config[key.name] != nil else { continue }
            switch step[key] {
            case branchValue? where branch == nil:
                problem(step.id, "\(key.name) '\(branchValue)' needs a '\(branchKey)' step")
            case "abort"? where branch != nil:
                problem(step.id, "\(key.name) 'abort' takes no '\(branchKey)' step")
            case branchValue?, "abort"?:
                break
            default:
                problem(step.id, "\(key.name) must be '\(branchValue)' or 'abort'")
            }
        }
        for key in CommonStepConfig.variables where step.config[key.name] != nil {
            if step[key].map(Expression.isIdentifier) != true {
                problem(step.id, "'\(key.name)' must be a name of letters, digits and underscores")
            }
        }
    }

    mutating func checkConnections(of step: StepDefinition, stepIDs: Set<String>) {
        if step.type.isTerminal {
            if step.next != nil { problem(step.id, "a \(step.type.rawValue) step ends the journey and takes no 'next'") }
        } else if step.next == nil {
            problem(step.id, "missing 'next'")
        }
        for target in step.targets where !stepIDs.contains(target) {
            problem(step.id, "branch to unknown step '\(target)'")
        }
    }

    mutating func checkReachability(steps: [StepDefinition], start: String) {
        let byID = Dictionary(steps.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var reached: Set<String> = []
        var queue = [start]
        while let id = queue.popLast() {
            guard reached.insert(id).inserted, let step = byID[id] else { continue }
            queue += step.targets
        }
        for step in steps where !reached.contains(step.id) {
            problem(step.id, "unreachable: no branch leads to this step")
        }
    }

    /// Refuses a ring of steps that can each pass the run on to the next as it is entered
    /// (`targetsOnEntry`): a run that entered it would go round without the client, never stopping. Each
    /// ring is named once, at its first step in the document.
    mutating func checkRingsWithoutClient(steps: [StepDefinition]) {
        let byID = Dictionary(steps.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var named: Set<String> = []
        for step in steps where !named.contains(step.id) {
            guard let ring = Self.ring(from: step.id, byID) else { continue }
            named.formUnion(ring)
            problem(step.id, "steps \((ring + [step.id]).joined(separator: " → ")) can each pass the run on without the client: a run entering them would never stop")
        }
    }

    /// Refuses a chain of more steps in one pass (`continuationsOnEntry`: `create_user` steps in a row) than a
    /// run passes through without the client, the step after them counted (`JourneyRunner.maximumAutomaticSteps`):
    /// a run entering it would fail at run time. Named once, at its first step in the document.
    mutating func checkChainsWithoutClient(steps: [StepDefinition]) {
        let byID = Dictionary(steps.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var longest: [String: Int] = [:]
        var entered: Set<String> = []
        /// Steps a run enters from `id` on in one pass; a ring (refused above) counts once.
        func length(from id: String) -> Int {
            if let known = longest[id] { return known }
            guard let step = byID[id], entered.insert(id).inserted else { return 1 }
            let result = 1 + (step.continuationsOnEntry.map { length(from: $0) }.max() ?? 0)
            longest[id] = result
            return result
        }
        let limit = JourneyRunner.maximumAutomaticSteps
        guard let first = steps.first(where: { length(from: $0.id) > limit }) else { return }
        problem(first.id, "\(length(from: first.id)) steps from here can follow one another without the client: a run takes at most \(limit)")
    }

    /// The shortest way from `start` back to itself through ways taken on entry, `start` first; nil when
    /// there is none.
    private static func ring(from start: String, _ byID: [String: StepDefinition]) -> [String]? {
        var cameFrom: [String: String] = [:]
        var queue = [start]
        while !queue.isEmpty {
            let id = queue.removeFirst()
            for target in byID[id]?.targetsOnEntry ?? [] {
                if target == start {
                    var ring = [id]
                    while let previous = cameFrom[ring[0]] { ring.insert(previous, at: 0) }
                    return ring
                }
                guard cameFrom[target] == nil, target != start else { continue }
                cameFrom[target] = id
                queue.append(target)
            }
        }
        return nil
    }

    /// Expressions may read step outputs (`@<step>`), step errors (`@<step>_error`) and declared
    /// output variables.
    mutating func checkExpressions(of step: StepDefinition, variables: Set<String>) {
        do {
            for expression in try ConfigValue.expressions(in: .object(step.config)) {
                if case .variable(let name) = expression.source, !variables.contains(name),
                    !(name.hasSuffix(Self.errorSuffix) && variables.contains(String(name.dropLast(Self.errorSuffix.count))))
                {
                    problem(step.id, "expression reads '\(name)', which is not a step or output variable of this journey")
                }
            }
        } catch {
            problem(step.id, error.description)
        }
    }
}

extension JSONValue {
    /// Converts what Yams loads (scalars resolved by YAML's core schema) into JSON.
    init(yamlNode node: Any?) throws {
        switch node {
        case nil, is NSNull: self = .null
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .number(Double(value))
        case let value as Double: self = .number(value)
        case let value as String: self = .string(value)
        case let value as [Any]: self = .array(try value.map { try JSONValue(yamlNode: $0) })
        case let value as [AnyHashable: Any]:
            var members: [String: JSONValue] = [:]
            for (key, member) in value {
                guard let key = key.base as? String else { throw YAMLShapeError(reason: "mapping keys must be strings") }
                members[key] = try JSONValue(yamlNode: member)
            }
            self = .object(members)
        default:
            throw YAMLShapeError(reason: "unsupported value \(String(describing: node))")
        }
    }
}

struct YAMLShapeError: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
