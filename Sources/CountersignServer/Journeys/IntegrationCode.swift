import CountersignCore
import Journeys

/// The languages of the SDKs a journey's integration code is written for.
enum IntegrationLanguage: String, CaseIterable, Sendable {
    /// The browser SDK (`/sdk/countersign.js`).
    case javascript
    /// The Swift SDK (`CountersignClient`, `CountersignCore`).
    case swift
    /// The Android SDK (`countersign.client`, `countersign.core`).
    case kotlin
}

/// A starting handler for one journey in one SDK, as the console shows it and lets one download it
/// (DESIGN.md §8): a `switch` on the step id the client is shown, with one case per step the journey can
/// reach, each answering with the SDK's own functions and the step's own input fields.
///
/// Everything taken from the journey's YAML (its id, its name, form ids, field names, branch ids) is
/// operator-written text: it reaches the code only as an escaped string literal, as a comment cleaned of
/// anything that could end the comment, or as an identifier of `[A-Za-z0-9_]` that is no keyword.
struct IntegrationCode: Sendable, Equatable {
    let language: IntegrationLanguage
    /// `<journey id>.js`, `<Journey>Journey.swift` or `<Journey>Journey.kt`.
    let filename: String
    let code: String
}

extension IntegrationCode {
    /// The code for `journey`; `startsFromPush`: whether it starts only from a push
    /// (`POST /v1/mobile-approve/start`), as the journeys that web-to-mobile steps name do
    /// (`JourneyRegistry.mobileApproveJourneyIDs`) and those that read what a push carries.
    static func generate(for journey: JourneyDefinition, in language: IntegrationLanguage, startsFromPush: Bool) -> IntegrationCode {
        let plan = IntegrationPlan(journey, startsFromPush: startsFromPush || journey.readsMobileApproveParameters)
        switch language {
        case .javascript:
            return IntegrationCode(language: language, filename: "\(plan.fileStem).js", code: JavaScriptIntegration(plan).code)
        case .swift:
            return IntegrationCode(language: language, filename: "\(plan.typeName).swift", code: SwiftIntegration(plan).code)
        case .kotlin:
            return IntegrationCode(language: language, filename: "\(plan.typeName).kt", code: KotlinIntegration(plan).code)
        }
    }
}

// MARK: - What a client meets in a journey

/// What a client of `journey` is shown and answers, worked out once from its definition for every language:
/// the steps it can reach from `start` (through `next`, `failure`, `cancel` and custom branches), grouped by
/// the `journeyStepId` each is presented under.
///
/// The config keys read here are those the step types declare as `ConfigKey`s in `Sources/Journeys/Steps`
/// (`FormStep.formID` and `.schema`, `BiometricsAuthenticationStep.userIdentifier`,
/// `TransactionSigningStep.authorizationRequest`, `ConfigKey.approvalData`), which that module keeps to itself.
struct IntegrationPlan {
    let journey: JourneyDefinition
    /// Whether it starts only from a push on a registered phone (`POST /v1/mobile-approve/start`).
    let startsFromPush: Bool
    /// The steps a run can reach, in the order a run meets them (breadth first from `start`).
    let reachable: [StepDefinition]
    /// The presented step ids, each with its steps, in the order a run meets them.
    let cases: [PresentedStep]
    /// Form steps whose `form_id` is an expression: their step id is known only as the journey runs.
    let computedForms: [StepDefinition]
    /// Steps presented under `action:success` or `action:rejection` (a form id chosen so): the final cases
    /// take them.
    let shadowed: [StepDefinition]
    /// The names of start parameters (`@policy.request().params.<name>`) the reachable steps read; `*`
    /// for all of them.
    let requestParams: [String]
    /// Whether a transaction signing step signs the start call's `approval_data` (it configures none).
    let needsStartApprovalData: Bool
    /// Whether a biometric sign-in is not pinned to a user (`user_identifier`): the app names the user.
    let needsUserIdentifier: Bool

    init(_ journey: JourneyDefinition, startsFromPush: Bool) {
        self.journey = journey
        self.startsFromPush = startsFromPush
        var order: [StepDefinition] = []
        var seen: Set<String> = []
        var queue = [journey.start]
        while !queue.isEmpty {
            let id = queue.removeFirst()
            guard seen.insert(id).inserted, let step = journey.step(id) else { continue }
            order.append(step)
            queue += [step.next, step.failure, step.cancel].compactMap { $0 }
            queue += step.branches.keys.sorted().compactMap { step.branches[$0]?.target }
        }
        reachable = order

        var cases: [PresentedStep] = []
        var computed: [StepDefinition] = []
        var shadowed: [StepDefinition] = []
        for step in order {
            guard let kind = PresentedStep.Kind(step.type) else { continue }
            let id: String
            switch Self.presentedID(of: step, kind: kind) {
            case .fixed(let fixed): id = fixed
            case .computed:
                computed.append(step)
                continue
            }
            if id == JourneyStepID.success || id == JourneyStepID.rejection {
                shadowed.append(step)
            } else if let index = cases.firstIndex(where: { $0.id == id }) {
                cases[index].add(step, kind: kind, startsFromPush: startsFromPush)
            } else {
                cases.append(PresentedStep(id: id, first: step, kind: kind, startsFromPush: startsFromPush))
            }
        }
        self.cases = cases
        computedForms = computed
        self.shadowed = shadowed

        var params: Set<String> = []
        for step in order {
            for expression in Self.expressions(in: .object(step.config)) where expression.source == .requestParams {
                params.insert(expression.path.first ?? "*")
            }
        }
        requestParams = params.sorted()
        needsStartApprovalData = order.contains { step in
            step.type == .mobileBiometricsTransactionSigning && Self.isAbsent(step.config["approval_data"])
                && Self.isAbsent(step.config["authorization_request"])
        }
        needsUserIdentifier = order.contains { $0.type == .mobileBiometricsAuthentication && Self.isAbsent($0.config["user_identifier"]) }
    }

    /// Whether the journey is answered on a phone: it has a step only a phone answers, or starts from a push.
    var runsOnPhone: Bool { journey.runsOnPhone || startsFromPush }

    /// Whether a step answered with keys kept on the phone is reachable.
    var usesKeys: Bool { cases.contains { $0.kind.usesKeys } }

    /// Whether a registration step is reachable: its keys are kept at success and dropped at rejection.
    var registers: Bool { cases.contains { $0.kind == .biometricRegistration || $0.kind == .deviceRegistration } }

    /// Whether a step answered in the given way is reachable.
    func has(_ kind: PresentedStep.Kind) -> Bool { cases.contains { $0.kind == kind } }

    /// The reachable steps of `type`.
    func steps(_ type: StepType) -> [StepDefinition] { reachable.filter { $0.type == type } }

    /// The journeys its web-to-mobile steps push to the phone.
    var mobileJourneys: [String] {
        let reachableIDs = Set(reachable.map(\.id))
        var seen: Set<String> = []
        return journey.mobileJourneys.filter { reachableIDs.contains($0.stepID) && seen.insert($0.journeyID).inserted }.map(\.journeyID)
    }

    /// The journey's id as a file name of `[A-Za-z0-9_]` (journey ids are such names already, but for a
    /// first letter that may be any letter).
    var fileStem: String { CodeName.sanitized(journey.id, fallback: "journey") }

    /// The journey's id as a type name: `web_login` → `WebLoginJourney`.
    var typeName: String { CodeName.upperCamel(journey.id, fallback: "Integration") + "Journey" }

    /// The journey's id as a function name: `web_login` → `runWebLogin`.
    var functionName: String { "run" + CodeName.upperCamel(journey.id, fallback: "Journey") }

    /// What the header says of the journey: its id and name, for a comment.
    var title: String {
        let name = journey.name == journey.id ? "" : ": " + journey.name
        return "'\(journey.id)'\(name)"
    }

    private enum PresentedID {
        case fixed(String)
        /// Computed as the journey runs, from this expression.
        case computed
    }

    /// The `journeyStepId` `step` is shown under: its kind's, or for a form its `form_id` (its step id
    /// without one, or when the expression gives no string).
    private static func presentedID(of step: StepDefinition, kind: PresentedStep.Kind) -> PresentedID {
        guard kind == .form else { return .fixed(kind.journeyStepID ?? step.id) }
        guard let formID = step.config["form_id"], formID != .null else { return .fixed(step.id) }
        guard let text = formID.stringValue else { return .fixed(step.id) }
        if text.hasPrefix("@@") { return .fixed(String(text.dropFirst())) }
        if text.hasPrefix("@") { return .computed }
        return .fixed(text)
    }

    /// Every expression in a config value, however deeply nested (as `ConfigValue.expressions` finds them).
    /// (`Journeys.Expression`: Foundation has an `Expression` too.)
    static func expressions(in value: JSONValue) -> [Journeys.Expression] {
        switch value {
        case .string(let text) where text.hasPrefix("@") && !text.hasPrefix("@@"):
            return (try? Journeys.Expression(parsing: text)).map { [$0] } ?? []
        case .array(let elements):
            return elements.flatMap { expressions(in: $0) }
        case .object(let members):
            return members.keys.sorted().flatMap { expressions(in: members[$0] ?? .null) }
        default:
            return []
        }
    }

    private static func isAbsent(_ value: JSONValue?) -> Bool {
        value == nil || value == .null
    }
}

/// One `journeyStepId` a client can be shown, and the steps shown under it.
struct PresentedStep {
    /// How the client answers it.
    enum Kind: Equatable {
        /// `login_form`, `collect_information`: the form's fields.
        case form
        /// `web_to_mobile_authentication`: choose a phone, then wait for it.
        case approveOnPhone
        /// `otp_validation`: the code the browser shows.
        case webCode
        /// `enrollment_code`: the code the relying party issued.
        case enrollmentCode
        /// `issue_enrollment_code`: show a new phone's code, continue once it is scanned.
        case enrollmentCodeShown
        /// `mobile_biometrics_registration`
        case biometricRegistration
        /// `device_registration`
        case deviceRegistration
        /// `mobile_biometrics_authentication`
        case biometricAuthentication
        /// `mobile_biometrics_transaction_signing`
        case transactionSigning

        /// The kind of the steps of `type` that wait for the client; nil for those that never do.
        init?(_ type: StepType) {
            switch type {
            case .loginForm, .collectInformation: self = .form
            case .webToMobileAuthentication: self = .approveOnPhone
            case .otpValidation: self = .webCode
            case .enrollmentCode: self = .enrollmentCode
            case .issueEnrollmentCode: self = .enrollmentCodeShown
            case .mobileBiometricsRegistration: self = .biometricRegistration
            case .deviceRegistration: self = .deviceRegistration
            case .mobileBiometricsAuthentication: self = .biometricAuthentication
            case .mobileBiometricsTransactionSigning: self = .transactionSigning
            case .createUser, .complete, .reject: return nil
            }
        }

        /// The step id the server presents it under (`JourneyStepID`); nil for a form, which uses its own.
        var journeyStepID: String? {
            switch self {
            case .form: nil
            case .approveOnPhone: JourneyStepID.mobileApproveAuthentication
            case .webCode: JourneyStepID.otpValidation
            case .enrollmentCode: JourneyStepID.enrollmentCode
            case .enrollmentCodeShown: JourneyStepID.enrollmentCodeIssued
            case .biometricRegistration: JourneyStepID.mobileBiometricsRegistration
            case .deviceRegistration: JourneyStepID.deviceRegistration
            case .biometricAuthentication: JourneyStepID.mobileBiometricsAuthentication
            case .transactionSigning: JourneyStepID.mobileBiometricsTransactionSigning
            }
        }

        /// Whether it is answered with keys kept on the phone (the SDKs' `Authenticator`).
        var usesKeys: Bool {
            switch self {
            case .biometricRegistration, .deviceRegistration, .biometricAuthentication, .transactionSigning: true
            case .form, .approveOnPhone, .webCode, .enrollmentCode, .enrollmentCodeShown: false
            }
        }
    }

    let id: String
    let kind: Kind
    /// The steps shown under this id and answered this way.
    private(set) var steps: [StepDefinition]
    /// Steps shown under the same id but answered another way, which this case cannot tell apart.
    private(set) var others: [StepDefinition] = []
    /// A form's fields, those of every step shown under its id (required only where all require them).
    private(set) var fields: [FormField] = []
    /// Whether the person is asked before signing: a transaction, or a push journey's sign-in.
    private(set) var confirms = false
    /// Whether a web-to-mobile step may ask which phone to ring (`device_selection` is not `most_recent`).
    private(set) var asksForDevice = false
    /// A transaction signing step that signs approval data; one that signs a backend client's request.
    private(set) var signsApprovalData = false
    private(set) var signsAuthorizationRequest = false

    init(id: String, first step: StepDefinition, kind: Kind, startsFromPush: Bool) {
        self.id = id
        self.kind = kind
        steps = []
        add(step, kind: kind, startsFromPush: startsFromPush)
    }

    mutating func add(_ step: StepDefinition, kind: Kind, startsFromPush: Bool) {
        guard kind == self.kind else {
            others.append(step)
            return
        }
        steps.append(step)
        switch kind {
        case .form:
            fields = FormField.merge(fields, FormField.fields(of: step.config["schema"]), firstStep: steps.count == 1)
        case .approveOnPhone:
            asksForDevice = asksForDevice || step.config["device_selection"]?.stringValue != "most_recent"
        case .biometricAuthentication:
            confirms = confirms || startsFromPush
        case .transactionSigning:
            confirms = true
            if let request = step.config["authorization_request"], request != .null {
                signsAuthorizationRequest = true
            } else {
                signsApprovalData = true
            }
        default:
            break
        }
    }

    /// Where a cancel leads from its steps, for a comment: the step ids, or the rejection.
    var cancelTargets: [String] {
        var seen: Set<String> = []
        return steps.map { $0.cancel ?? JourneyStepID.rejection }.filter { seen.insert($0).inserted }
    }

    /// The custom options its steps offer (their branches), by option id.
    var customOptions: [(id: String, target: String, fields: [FormField])] {
        var seen: Set<String> = []
        return steps.flatMap { step in
            step.branches.keys.sorted().compactMap { id -> (id: String, target: String, fields: [FormField])? in
                guard let branch = step.branches[id], seen.insert(id).inserted else { return nil }
                return (id, branch.target, FormField.fields(of: branch.schema))
            }
        }
    }

    /// A comment line naming its steps and their types: `Step 'login' (login_form)`.
    var stepsDescription: String {
        let named = steps.map { "'\($0.id)' (\($0.type.rawValue))" }
        return (named.count == 1 ? "Step " : "Steps ") + named.joined(separator: ", ")
    }
}

/// One input field of a form: a property of its `schema`.
struct FormField: Equatable {
    enum FieldType: String {
        case string, number, integer, boolean
    }

    let name: String
    let type: FieldType
    let required: Bool
    let title: String?

    /// The fields of a form schema: the required ones in the order `required` lists them, then the others
    /// by name. The loader has checked the schema (`FormSchema.problem`).
    static func fields(of schema: JSONValue?) -> [FormField] {
        guard let properties = schema?["properties"]?.objectValue else { return [] }
        let required = (schema?["required"]?.arrayValue ?? []).compactMap(\.stringValue)
        var names: [String] = []
        for name in required where properties[name] != nil && !names.contains(name) { names.append(name) }
        names += properties.keys.sorted().filter { !names.contains($0) }
        return names.map { name in
            let property = properties[name]
            return FormField(
                name: name, type: property?["type"]?.stringValue.flatMap(FieldType.init(rawValue:)) ?? .string,
                required: required.contains(name), title: property?["title"]?.stringValue)
        }
    }

    /// The fields of two forms shown under one id: all of them, each required only when both require it.
    static func merge(_ earlier: [FormField], _ later: [FormField], firstStep: Bool) -> [FormField] {
        if firstStep { return later }
        var merged = earlier.map { field in
            guard let other = later.first(where: { $0.name == field.name }) else {
                return FormField(name: field.name, type: field.type, required: false, title: field.title)
            }
            return FormField(name: field.name, type: field.type, required: field.required && other.required, title: field.title ?? other.title)
        }
        for field in later where !earlier.contains(where: { $0.name == field.name }) {
            merged.append(FormField(name: field.name, type: field.type, required: false, title: field.title))
        }
        return merged
    }

    /// For a comment: `email (string, required)`.
    var summary: String {
        "\(name) (\(type.rawValue)\(required ? ", required" : ""))"
    }

    /// For a comment: the summaries of `fields`, or `no fields`.
    static func summary(of fields: [FormField]) -> String {
        fields.isEmpty ? "no fields" : fields.map(\.summary).joined(separator: ", ")
    }
}

// MARK: - Text that journey data may reach

/// Identifiers made from journey data: `[A-Za-z0-9_]` only, never starting with a digit, never a
/// keyword of the language, never one the generated code already uses.
enum CodeName {
    /// The runs of ASCII letters and digits in `text`.
    static func words(_ text: String) -> [String] {
        var words: [String] = []
        var current = ""
        for scalar in text.unicodeScalars {
            if isLetterOrDigit(scalar) {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// `text` with every character outside `[A-Za-z0-9_]` made `_`, and `_` before a first digit;
    /// `fallback` when no letter or digit is left.
    static func sanitized(_ text: String, fallback: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            let kept = isLetterOrDigit(scalar) || scalar == "_"
            result.unicodeScalars.append(kept ? scalar : "_")
        }
        guard result.contains(where: { $0 != "_" }) else { return fallback }
        return startsWithDigit(result) ? "_" + result : result
    }

    /// `email_form` → `EmailForm`; `fallback` when `text` has no letter or digit.
    static func upperCamel(_ text: String, fallback: String) -> String {
        let joined = words(text).map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        guard !joined.isEmpty else { return fallback }
        return startsWithDigit(joined) ? "_" + joined : joined
    }

    /// `email_form` → `emailForm`; `fallback` when `text` has no letter or digit.
    static func lowerCamel(_ text: String, fallback: String) -> String {
        let parts = words(text)
        guard let first = parts.first else { return fallback }
        let joined = first.prefix(1).lowercased() + first.dropFirst() + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        return startsWithDigit(joined) ? "_" + joined : joined
    }

    private static func startsWithDigit(_ text: String) -> Bool {
        text.unicodeScalars.first.map { $0.value >= 0x30 && $0.value <= 0x39 } ?? false
    }

    /// An ASCII letter or digit.
    private static func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        default: false
        }
    }
}

/// Hands out identifiers that are unique in one scope and no keyword: a taken or reserved name gets `_`,
/// then a number.
struct NameAllocator {
    private var taken: Set<String>

    init(reserved: Set<String>) {
        taken = reserved
    }

    mutating func claim(_ name: String) -> String {
        var candidate = name
        if taken.contains(candidate) { candidate += "_" }
        var number = 2
        while taken.contains(candidate) {
            candidate = name + "_\(number)"
            number += 1
        }
        taken.insert(candidate)
        return candidate
    }
}

/// String literals and comments that journey data may reach, for each language.
enum CodeText {
    /// A JavaScript string literal in single quotes: a quote, a backslash and anything outside printable
    /// ASCII escaped (`\u{…}`), so no line terminator, `${` or `</script>` ends it or reads as code.
    static func javaScriptString(_ text: String) -> String {
        quoted(text, in: "'")
    }

    /// A Swift string literal: a quote, a backslash (so no `\(` interpolation) and anything outside
    /// printable ASCII escaped (`\u{…}`).
    static func swiftString(_ text: String) -> String {
        quoted(text, in: "\"")
    }

    /// `text` between `quote`s, with the quote, a backslash and anything outside printable ASCII written
    /// `\u{…}`, an escape both JavaScript and Swift read.
    private static func quoted(_ text: String, in quote: Unicode.Scalar) -> String {
        var result = String(quote)
        for scalar in text.unicodeScalars {
            switch scalar {
            case quote, "\\": result += "\\" + String(scalar)
            case " "..."~": result.unicodeScalars.append(scalar)
            default: result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return result + String(quote)
    }

    /// A Kotlin string literal: a quote, a backslash, `$` (no template) and anything outside printable
    /// ASCII escaped (`\uXXXX`, by UTF-16 unit).
    static func kotlinString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "$": result += "\\$"
            case " "..."~": result.unicodeScalars.append(scalar)
            default:
                for unit in String(scalar).utf16 {
                    let hex = String(unit, radix: 16, uppercase: true)
                    result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
            }
        }
        return result + "\""
    }

    /// Text for a line comment (`//`) in any of the three languages: one line of letters, digits,
    /// punctuation, symbols and spaces, with no line terminator (`\n`, `\r`, U+2028, U+2029, U+0085), no
    /// format or control character (no bidirectional override either), no `/*` or `*/` (Swift and Kotlin
    /// nest block comments), and at most `limit` characters.
    static func comment(_ text: String, limit: Int = 160) -> String {
        var result = ""
        var count = 0
        var last: Unicode.Scalar?
        for scalar in text.unicodeScalars {
            guard count < limit else {
                result += "…"
                break
            }
            let kept: Unicode.Scalar = isCommentSafe(scalar) ? scalar : (scalar.properties.generalCategory == .spaceSeparator ? " " : "?")
            // `/*` becomes `/ *`, `*/` becomes `* /`.
            if (last == "/" && kept == "*") || (last == "*" && kept == "/") { result += " " }
            result.unicodeScalars.append(kept)
            last = kept
            count += 1
        }
        return result
    }

    private static func isCommentSafe(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value >= 0x20 && scalar.value <= 0x7E { return true }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark, .spacingMark,
            .decimalNumber, .letterNumber, .otherNumber, .connectorPunctuation, .dashPunctuation, .openPunctuation,
            .closePunctuation, .initialPunctuation, .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol,
            .modifierSymbol, .otherSymbol:
            return true
        default:
            return false
        }
    }
}

/// Lines of code with their indentation.
struct CodeWriter {
    private var lines: [String] = []
    private var depth = 0
    private let unit: String

    init(indent unit: String) {
        self.unit = unit
    }

    /// One line at the current indentation (an empty one without).
    mutating func line(_ text: String = "") {
        lines.append(text.isEmpty ? "" : String(repeating: unit, count: depth) + text)
    }

    /// A line comment of journey-derived text, cleaned by `CodeText.comment`.
    mutating func comment(_ text: String, prefix: String = "//") {
        line(prefix + " " + CodeText.comment(text))
    }

    /// `opening`, `body` indented one level, then `closing` (none when empty).
    mutating func block(_ opening: String, _ closing: String = "}", _ body: (inout CodeWriter) -> Void) {
        line(opening)
        depth += 1
        body(&self)
        depth -= 1
        if !closing.isEmpty { line(closing) }
    }

    /// `body` indented one level.
    mutating func indented(_ body: (inout CodeWriter) -> Void) {
        depth += 1
        body(&self)
        depth -= 1
    }

    var text: String { lines.joined(separator: "\n") + "\n" }
}

extension IntegrationPlan {
    /// The header's comment lines, the same in every language but for what its SDK can do.
    func headerLines(sdk: String, platform: [String]) -> [String] {
        [
            "Countersign integration code for the journey \(title).",
            "Generated from the journey's definition by the server: a starting point to edit, with one case per",
            "step a client of it can be shown, each answered with \(sdk)'s own calls and the step's own fields.",
        ] + platform
    }

    /// Notes shared by the step cases: what a cancel leads to, the custom options, and the steps that share
    /// the id but are answered otherwise.
    func caseNotes(_ presented: PresentedStep) -> [String] {
        var notes = [presented.stepsDescription + "."]
        if presented.steps.contains(where: { $0.cancel != nil }) {
            let cancels = presented.cancelTargets.map { $0 == JourneyStepID.rejection ? "the rejection" : "step '\($0)'" }
            notes.append("A cancel leads to " + cancels.joined(separator: " or ") + ".")
        }
        for option in presented.customOptions {
            let fields = option.fields.isEmpty ? "" : ", with " + option.fields.map(\.summary).joined(separator: ", ")
            notes.append("Also offered: option '\(option.id)' (a custom branch to step '\(option.target)'\(fields)).")
        }
        for other in presented.others {
            notes.append("Step '\(other.id)' (\(other.type.rawValue)) is shown under this id too, and answered otherwise.")
        }
        return notes
    }

    /// The comment of the success case.
    var successNote: String {
        let completes = steps(.complete).map { "'\($0.id)'" }
        guard !completes.isEmpty else { return "No step of this journey completes it." }
        return "The journey completed (" + (completes.count == 1 ? "step " : "steps ") + completes.joined(separator: ", ") + ")."
    }

    /// The comment of the rejection case.
    var rejectionNote: String {
        let rejects = steps(.reject).map { "'\($0.id)'" }
        let named = rejects.isEmpty ? "" : (rejects.count == 1 ? "step " : "steps ") + rejects.joined(separator: ", ") + ", or "
        return "The journey was rejected: " + named + "a failure or cancel with no step to go to."
    }

    /// Comment lines for the default case: what it may meet.
    var defaultNotes: [String] {
        var notes = ["A step this code does not know: the journey changed since it was generated."]
        for step in computedForms {
            notes.append("Step '\(step.id)' (\(step.type.rawValue)) shows a form whose id is computed as it runs: handle it here.")
        }
        for step in shadowed {
            notes.append("Step '\(step.id)' (\(step.type.rawValue)) is shown under a final step id, and meets the final case.")
        }
        return notes
    }
}
