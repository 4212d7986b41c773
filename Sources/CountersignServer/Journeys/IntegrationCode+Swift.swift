import CountersignCore
import Journeys

/// A journey's handler for the Swift SDK (`CountersignClient`, `CountersignCore`): an enum named after the
/// journey holding its forms' fields, a `UI` protocol of what the app shows and asks, and `run`, which starts
/// the journey with an `OrchestrationClient` and answers each step, with the `Authenticator`'s keys where
/// a step signs.
///
/// The Swift SDK runs every kind of journey: a phone journey with a native client's id, a push journey
/// from the push's payload (`startMobileApproveJourney`), and a web journey with a web client's id, as a
/// browser would (the client keeps the browser credential such a journey hands out).
struct SwiftIntegration {
    let plan: IntegrationPlan

    init(_ plan: IntegrationPlan) {
        self.plan = plan
    }

    static let keywords: Set<String> = [
        "Any", "Protocol", "Self", "Type", "actor", "any", "as", "associatedtype", "async", "await", "borrowing", "break",
        "case", "catch", "class", "consume", "consuming", "continue", "copy", "default", "defer", "deinit", "discard", "do",
        "each", "else", "enum", "extension", "fallthrough", "false", "fileprivate", "for", "func", "guard", "if", "import",
        "in", "init", "inout", "internal", "is", "let", "macro", "nil", "nonisolated", "open", "operator", "package",
        "precedencegroup", "private", "protocol", "public", "repeat", "rethrows", "return", "self", "some", "static",
        "struct", "subscript", "super", "switch", "throw", "throws", "true", "try", "typealias", "var", "where", "while",
    ]

    /// The `UI` requirements every journey's code may declare, and the names `run` uses.
    static let reserved: Set<String> = [
        "UI", "run", "showError", "chooseDevice", "waitingForPhone", "typeWebCode", "enrollmentCode", "showEnrollmentCode",
        "confirm", "client", "ui", "response", "authenticator",
    ]

    /// The SDK's `JourneyStepID` member for a presented id, where it has one.
    static func stepConstant(_ kind: PresentedStep.Kind) -> String? {
        switch kind {
        case .form: nil
        case .approveOnPhone: "JourneyStepID.mobileApproveAuthentication"
        case .webCode: "JourneyStepID.otpValidation"
        case .enrollmentCode: "JourneyStepID.enrollmentCode"
        case .enrollmentCodeShown: "JourneyStepID.enrollmentCodeIssued"
        case .biometricRegistration: "JourneyStepID.mobileBiometricsRegistration"
        case .deviceRegistration: "JourneyStepID.deviceRegistration"
        case .biometricAuthentication: "JourneyStepID.mobileBiometricsAuthentication"
        case .transactionSigning: "JourneyStepID.mobileBiometricsTransactionSigning"
        }
    }

    /// A form: its `UI` method, its type, and its fields with their property names.
    struct Form {
        let presented: PresentedStep
        let method: String
        let type: String
        let fields: [(field: FormField, property: String)]
    }

    var code: String {
        var names = NameAllocator(reserved: Self.keywords.union(Self.reserved).union([plan.typeName]))
        let forms = plan.cases.filter { $0.kind == .form }.map { presented in
            let method = names.claim(CodeName.lowerCamel(presented.id, fallback: "form"))
            let base = CodeName.upperCamel(presented.id, fallback: "Answer")
            let type = names.claim(base.hasSuffix("Form") ? base : base + "Form")
            var properties = NameAllocator(reserved: Self.keywords)
            let fields = presented.fields.map { ($0, properties.claim(CodeName.lowerCamel($0.name, fallback: "field"))) }
            return Form(presented: presented, method: method, type: type, fields: fields)
        }

        var w = CodeWriter(indent: "    ")
        for line in plan.headerLines(sdk: "the Swift SDK", platform: platformLines) { w.comment(line) }
        w.line("import CountersignClient")
        w.line("import CountersignCore")
        w.line()
        w.block("enum \(plan.typeName) {") { w in
            for form in forms {
                w.comment("The answer to the form '\(form.presented.id)'.", prefix: "///")
                w.block("struct \(form.type): Sendable {") { w in
                    for (field, property) in form.fields {
                        if let title = field.title { w.comment("\(field.name): \(title)", prefix: "///") }
                        w.line("var \(property): \(Self.swiftType(field.type))\(field.required ? "" : "?")")
                    }
                }
                w.line()
            }
            uiProtocol(forms, &w)
            w.line()
            runFunction(forms, &w)
        }
        return w.text
    }

    private var platformLines: [String] {
        if plan.startsFromPush {
            return ["Runs on a registered phone, started from a push: the payload the phone received, as it came."]
        }
        if plan.runsOnPhone {
            return ["Runs on the phone, started with a native client's id."]
        }
        var lines = [
            "A web journey: the server starts it only for a web client, so this code runs it as a browser would, with a",
            "web client's id (a desktop app, a kiosk, a test). A web page uses the JavaScript code.",
        ]
        for journey in plan.mobileJourneys {
            lines.append("The phone answers its approval with the journey '\(journey)': see that journey's code.")
        }
        return lines
    }

    static func swiftType(_ type: FormField.FieldType) -> String {
        switch type {
        case .string: "String"
        case .number: "Double"
        case .integer: "Int"
        case .boolean: "Bool"
        }
    }

    /// The JSON value of a form's property, `value` being its expression.
    static func jsonValue(_ type: FormField.FieldType, _ value: String) -> String {
        switch type {
        case .string: ".string(\(value))"
        case .number: ".number(\(value))"
        case .integer: ".number(Double(\(value)))"
        case .boolean: ".bool(\(value))"
        }
    }

    private func uiProtocol(_ forms: [Form], _ w: inout CodeWriter) {
        w.line("/// What the app shows and asks at the journey's steps.")
        w.block("protocol UI {") { w in
            w.line("/// The last answer was refused (`error.code`, `error.message`); the step is shown again.")
            w.line("func showError(_ error: WireError) async")
            for form in forms {
                let fields = FormField.summary(of: form.presented.fields)
                w.comment("The form '\(form.presented.id)' (its schema is data?[\"schema\"]): \(fields); nil to cancel.", prefix: "///")
                w.line("func \(form.method)(_ data: JSONValue?) async throws -> \(form.type)?")
            }
            if plan.cases.contains(where: \.asksForDevice) {
                w.line("/// The person has several phones (`[{code, name}]`): the chosen code, or nil to cancel.")
                w.line("func chooseDevice(_ devices: [JSONValue]) async throws -> String?")
            }
            if plan.has(.approveOnPhone) {
                w.line("/// Called before each look at the phone's answer: `data?[\"otp\"]`, when set, is the code the person types on")
                w.line("/// the phone, `data?[\"push_status\"]` how the push went. False to cancel.")
                w.line("func waitingForPhone(_ data: JSONValue?) async throws -> Bool")
            }
            if plan.has(.webCode) {
                w.line("/// The code the browser shows (`data?[\"code_length\"]` digits), or nil to cancel.")
                w.line("func typeWebCode(_ data: JSONValue?) async throws -> String?")
            }
            if plan.has(.enrollmentCode) {
                w.line("/// The enrollment code the person scanned or typed, or nil to cancel.")
                w.line("func enrollmentCode(_ data: JSONValue?) async throws -> String?")
            }
            if plan.has(.enrollmentCodeShown) {
                w.line("/// Shows `data?[\"enrollment_code\"]` and its QR code to the new phone: true once it is scanned, false to withdraw it.")
                w.line("func showEnrollmentCode(_ data: JSONValue?) async throws -> Bool")
            }
            if plan.cases.contains(where: \.confirms) {
                w.line("/// Shows what is asked (`request_context`, `approval_data`, or `authorization_details` and `binding_message`):")
                w.line("/// true to sign it, false to deny.")
                w.line("func confirm(_ data: JSONValue?) async throws -> Bool")
            }
        }
    }

    private func runFunction(_ forms: [Form], _ w: inout CodeWriter) {
        w.line("/// Runs the journey to its end: the response at `action:success` (its `token` is for your backend to")
        w.line("/// verify); throws the rejection's `WireError`.")
        var parameters = ["client: OrchestrationClient", "ui: some UI"]
        if plan.usesKeys || plan.startsFromPush { parameters.append("authenticator: Authenticator") }
        if plan.startsFromPush { parameters += ["payload: [String: String]", "deviceID: String"] }
        if plan.needsUserIdentifier { parameters.append("userIdentifier: String") }
        if plan.has(.deviceRegistration) { parameters += ["deviceName: String", "deviceModel: String"] }
        let readsParams = !plan.startsFromPush && !plan.requestParams.isEmpty
        let readsApprovalData = !plan.startsFromPush && plan.needsStartApprovalData
        if readsParams {
            parameters.append("additionalParams: [String: JSONValue]")
            let names = plan.requestParams.map { $0 == "*" ? "(the whole object)" : $0 }.joined(separator: ", ")
            w.comment("`additionalParams`: what the journey reads as @policy.request().params: \(names).", prefix: "///")
        }
        if readsApprovalData {
            parameters.append("approvalData: [String: String]")
            w.line("/// `approvalData`: the transaction the person signs (at most 10 string values).")
        }
        if plan.has(.deviceRegistration) {
            w.line("/// Call `client.setPushToken(_:channel:appID:)` before, so that the server can push to this phone.")
        }
        w.line("static func run(")
        w.indented { w in w.line(parameters.joined(separator: ", ")) }
        w.block(") async throws -> IdoResponse {") { w in
            if plan.startsFromPush {
                w.line("var response = try await client.startMobileApproveJourney(payload: payload, deviceID: deviceID, authenticator: authenticator)")
            } else {
                let options = (readsParams ? ", additionalParams: additionalParams" : "") + (readsApprovalData ? ", approvalData: approvalData" : "")
                w.line("var response = try await client.startJourney(\(CodeText.swiftString(plan.journey.id))\(options))")
            }
            if plan.registers { w.line("var registeredUser: String?") }
            w.block("while true {") { w in
                w.line("if let error = response.error, response.journeyStepID != JourneyStepID.rejection { await ui.showError(error) }")
                // Swift writes a switch's cases at the switch's own indentation.
                w.line("switch response.journeyStepID {")
                for presented in plan.cases {
                    stepCase(presented, form: forms.first(where: { $0.presented.id == presented.id }), &w)
                }
                finalCases(&w)
                w.line("}")
            }
        }
    }

    private func submit(_ option: String, _ data: String? = nil) -> String {
        "response = try await client.submitClientResponse(.\(option)\(data.map { ", data: " + $0 } ?? ""))"
    }

    private func cancelling(_ w: inout CodeWriter, note: String? = nil) {
        if let note { w.line(note) }
        w.line(submit("cancel"))
        w.line("continue")
    }

    private func stepCase(_ presented: PresentedStep, form: Form?, _ w: inout CodeWriter) {
        w.line("case \(Self.stepConstant(presented.kind) ?? CodeText.swiftString(presented.id)):")
        w.indented { w in
            for note in plan.caseNotes(presented) { w.comment(note) }
            switch presented.kind {
            case .form:
                guard let form else { break }
                if form.fields.isEmpty {
                    w.block("guard try await ui.\(form.method)(response.data) != nil else {") { w in cancelling(&w) }
                    w.line(submit("clientInput", "[:]"))
                    break
                }
                w.block("guard let answer = try await ui.\(form.method)(response.data) else {") { w in cancelling(&w) }
                let required = form.fields.filter(\.field.required).map { field, property in
                    "\(CodeText.swiftString(field.name)): \(Self.jsonValue(field.type, "answer.\(property)"))"
                }
                let optional = form.fields.filter { !$0.field.required }
                guard !optional.isEmpty else {
                    if required.count == 1 {
                        w.line(submit("clientInput", "[\(required[0])]"))
                    } else {
                        w.line("response = try await client.submitClientResponse(.clientInput, data: [")
                        w.indented { w in required.forEach { w.line($0 + ",") } }
                        w.line("])")
                    }
                    break
                }
                // One statement per optional field: a literal of many `map`s and `??`s is slow to type-check.
                if required.isEmpty {
                    w.line("var fields: [String: JSONValue] = [:]")
                } else {
                    w.line("var fields: [String: JSONValue] = [")
                    w.indented { w in required.forEach { w.line($0 + ",") } }
                    w.line("]")
                }
                for (field, property) in optional {
                    w.line("if let value = answer.\(property) { fields[\(CodeText.swiftString(field.name))] = \(Self.jsonValue(field.type, "value")) }")
                }
                w.line(submit("clientInput", ".object(fields)"))
            case .approveOnPhone:
                if presented.asksForDevice {
                    w.block("if let devices = response.data?[\"devices\"]?.arrayValue {") { w in
                        w.block("guard let code = try await ui.chooseDevice(devices) else {") { w in cancelling(&w) }
                        w.line(submit("clientInput", "[\"selected_device_code\": .string(code)]"))
                        w.line("continue")
                    }
                }
                w.line("// To push to the phone again, while data?[\"resend_attempts_left\"] is above 0: submitClientResponse(.resend).")
                w.block("guard try await ui.waitingForPhone(response.data) else {") { w in cancelling(&w) }
                w.line("var seconds = 3.0")
                w.line("if case .number(let interval)? = response.data?[\"polling_interval\"] { seconds = interval }")
                w.line("try await Task.sleep(for: .seconds(seconds))")
                w.block("do {", "") { w in
                    w.line(submit("clientInput", "[:]"))
                }
                w.block("} catch CountersignClientError.server(_, let error) where error.code == ErrorCode.slowDown {") { w in
                    w.line("continue")
                }
            case .webCode:
                w.block("guard let code = try await ui.typeWebCode(response.data) else {") { w in cancelling(&w) }
                w.line(submit("clientInput", "[\"passcode\": .string(code)]"))
            case .enrollmentCode:
                w.block("guard let code = try await ui.enrollmentCode(response.data) else {") { w in cancelling(&w) }
                w.line(submit("clientInput", "[\"enrollment_code\": .string(code)]"))
            case .enrollmentCodeShown:
                w.block("guard try await ui.showEnrollmentCode(response.data) else {") { w in cancelling(&w) }
                w.line(submit("clientInput", "[:]"))
            case .biometricRegistration:
                w.line("let user = response.data?[\"user_identifier\"]?.stringValue ?? \"\"")
                w.line("registeredUser = user")
                w.line(submit("clientInput", "try await authenticator.registerNativeBiometrics(userIdentifier: user)"))
            case .deviceRegistration:
                w.line("registeredUser = response.data?[\"user_identifier\"]?.stringValue")
                w.line("let challenge = response.data?[\"challenge\"]?.stringValue ?? \"\"")
                w.line("let push = await client.pushRegistration")
                w.line("response = try await client.submitClientResponse(.clientInput, data: try await authenticator.registerDevice(")
                w.indented { w in w.line("challenge: challenge, name: deviceName, model: deviceModel, push: push))") }
            case .biometricAuthentication:
                if presented.confirms { confirmOrDeny(&w) }
                let fallback = plan.needsUserIdentifier ? "userIdentifier" : "\"\""
                w.line("let user = response.data?[\"user_identifier\"]?.stringValue ?? \(fallback)")
                w.line("let challenge = response.data?[\"biometrics_challenge\"]?.stringValue ?? \"\"")
                w.line(submit("clientInput", "try await authenticator.authenticateNativeBiometrics(userIdentifier: user, challenge: challenge)"))
            case .transactionSigning:
                confirmOrDeny(&w)
                w.line("let user = response.data?[\"user_identifier\"]?.stringValue ?? \"\"")
                w.line("let nonce = response.data?[\"nonce\"]?.stringValue ?? \"\"")
                w.line("let challenge = response.data?[\"biometrics_challenge\"]?.stringValue ?? \"\"")
                let signRequest = [
                    "let message = response.data?[\"binding_message\"]?.stringValue ?? \"\"",
                    "response = try await client.submitClientResponse(.clientInput, data: try await authenticator.authorizationRequestNativeBiometrics(",
                    "    userIdentifier: user, authorizationDetails: details, bindingMessage: message, nonce: nonce, challenge: challenge))",
                ]
                let signApprovalData = [
                    "let transaction = response.data?[\"approval_data\"]?.objectValue?.compactMapValues(\\.stringValue) ?? [:]",
                    "response = try await client.submitClientResponse(.clientInput, data: try await authenticator.approvalNativeBiometrics(",
                    "    userIdentifier: user, approvalData: transaction, nonce: nonce, challenge: challenge))",
                ]
                switch (presented.signsApprovalData, presented.signsAuthorizationRequest) {
                case (true, true):
                    w.line("// A backend client's request carries authorization details; a transaction, approval data.")
                    w.block("if let details = response.data?[\"authorization_details\"]?.arrayValue {") { w in
                        signRequest.forEach { w.line($0) }
                        w.line("continue")
                    }
                    signApprovalData.forEach { w.line($0) }
                case (false, true):
                    w.line("let details = response.data?[\"authorization_details\"]?.arrayValue ?? []")
                    signRequest.forEach { w.line($0) }
                default:
                    signApprovalData.forEach { w.line($0) }
                }
            }
        }
    }

    private func confirmOrDeny(_ w: inout CodeWriter) {
        w.block("guard try await ui.confirm(response.data) else {") { w in
            cancelling(&w, note: "// Denied. With data [\"reason\": .string(DenialReason.notMine)] the server learns the person did not ask at all.")
        }
    }

    private func finalCases(_ w: inout CodeWriter) {
        w.line("case JourneyStepID.success:")
        w.indented { w in
            w.comment(plan.successNote)
            if plan.registers {
                w.line("// The registration succeeded: the phone signs with its new keys from now on.")
                w.line("if let registeredUser { try await authenticator.keepRegisteredKeys(userIdentifier: registeredUser) }")
            }
            if plan.has(.deviceRegistration) {
                w.line("// response.data?[\"device_id\"]: the registered device's id; keep it for the pushes to come.")
            }
            w.line("return response")
        }
        w.line("case JourneyStepID.rejection:")
        w.indented { w in
            w.comment(plan.rejectionNote)
            if plan.registers {
                w.line("if let registeredUser { try await authenticator.discardRegisteredKeys(userIdentifier: registeredUser) }")
            }
            w.line("throw response.error ?? WireError(code: ErrorCode.rejected, message: \"The journey was rejected.\")")
        }
        w.line("default:")
        w.indented { w in
            for note in plan.defaultNotes { w.comment(note) }
            w.line("throw WireError(code: \"unexpected_step\", message: \"Unexpected step \\(response.journeyStepID).\")")
        }
    }
}
