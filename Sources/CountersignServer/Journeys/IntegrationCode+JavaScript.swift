import CountersignCore
import Journeys

/// A journey's handler for the browser SDK (`/sdk/countersign.js`): an ES module exporting
/// `run<Journey>(…)`, which starts the journey and answers each step through `ui`, an object of the page's
/// own async functions.
///
/// A phone journey is answered with keys the browser SDK does not hold: its code takes an `authenticator`,
/// the app's bridge to the phone's key store with the methods of the Swift and Android SDKs'
/// `Authenticator`, and says so. A push journey cannot be started by the browser SDK at all (the device
/// proof is signed with the device key): its code resumes the interaction a native layer started.
struct JavaScriptIntegration {
    let plan: IntegrationPlan

    init(_ plan: IntegrationPlan) {
        self.plan = plan
    }

    static let keywords: Set<String> = [
        "arguments", "async", "await", "break", "case", "catch", "class", "const", "continue", "debugger", "default",
        "delete", "do", "else", "enum", "eval", "export", "extends", "false", "finally", "for", "from", "function", "get",
        "if", "implements", "import", "in", "instanceof", "interface", "let", "new", "null", "of", "package", "private",
        "protected", "public", "return", "set", "static", "super", "switch", "this", "throw", "true", "try", "typeof",
        "undefined", "var", "void", "while", "with", "yield", "NaN", "Infinity",
        // Names every object has.
        "constructor", "prototype", "__proto__", "toString", "valueOf", "hasOwnProperty", "isPrototypeOf",
        "propertyIsEnumerable", "toLocaleString",
    ]

    /// Names the run function's body uses itself.
    static let locals: Set<String> = [
        "response", "ui", "answer", "authenticator", "clientId", "additionalParams", "approvalData", "userIdentifier",
        "savedState", "registeredUser", "code", "update", "user", "data", "initialize", "startJourney", "submitClientResponse",
        "waitForMobileApproval", "restoreFromSerializedState", "ClientResponseOptionType", "CountersignError", "JourneyStepId",
    ]

    /// The `ui` functions every journey's code may call, by the kind of step that calls them.
    static let fixedUI: Set<String> = ["showError", "chooseDevice", "waitingForPhone", "typeWebCode", "enrollmentCode", "showEnrollmentCode", "confirm"]

    /// The SDK's `JourneyStepId` member for a presented id, where it has one.
    static func stepConstant(_ kind: PresentedStep.Kind) -> String? {
        switch kind {
        case .approveOnPhone: "JourneyStepId.MobileApproveAuthentication"
        case .webCode: "JourneyStepId.OtpValidation"
        case .biometricAuthentication: "JourneyStepId.MobileBiometricsAuthentication"
        case .transactionSigning: "JourneyStepId.MobileBiometricsTransactionSigning"
        case .enrollmentCodeShown: "JourneyStepId.EnrollmentCodeIssued"
        // Not in the browser SDK's list: browsers never see them.
        case .form, .enrollmentCode, .biometricRegistration, .deviceRegistration: nil
        }
    }

    var code: String {
        var names = NameAllocator(reserved: Self.keywords.union(Self.locals).union(Self.fixedUI))
        let formMethods = plan.cases.filter { $0.kind == .form }.map { presented in
            (presented.id, names.claim(CodeName.lowerCamel(presented.id, fallback: "form")))
        }
        let formMethod = Dictionary(formMethods, uniquingKeysWith: { first, _ in first })

        var w = CodeWriter(indent: "  ")
        for line in plan.headerLines(sdk: "the browser SDK", platform: platformLines) { w.comment(line) }
        let usesWait = plan.has(.approveOnPhone)
        var imports = plan.startsFromPush ? ["restoreFromSerializedState"] : ["initialize", "startJourney"]
        imports.append("submitClientResponse")
        if usesWait { imports.append("waitForMobileApproval") }
        w.line("import {")
        w.indented { w in
            w.line(imports.joined(separator: ", ") + ",")
            w.line("ClientResponseOptionType, CountersignError, JourneyStepId,")
        }
        w.line("} from '/sdk/countersign.js';")
        w.line()

        w.line("// `ui` is your \(plan.runsOnPhone ? "app's screens" : "page"): an object with these functions (each may be async).")
        w.line("//   showError(error): the last answer was refused ({code, message}); the step is shown again.")
        for presented in plan.cases {
            switch presented.kind {
            case .form:
                let fields = FormField.summary(of: presented.fields)
                w.comment("  \(formMethod[presented.id] ?? "form")(data): the form '\(presented.id)' (its schema is data.schema); returns an object with \(fields), or null to cancel.")
            case .approveOnPhone:
                if presented.asksForDevice {
                    w.line("//   chooseDevice(devices): the person has several phones ([{code, name}]); returns a code, or null to cancel.")
                }
                w.line("//   waitingForPhone(data): while the phone has not answered; data.otp, when set, is the code the person types on the")
                w.line("//     phone, data.push_status how the push went.")
            case .webCode:
                w.line("//   typeWebCode(data): the code the browser shows (data.code_length digits); returns it, or null to cancel.")
            case .enrollmentCode:
                w.line("//   enrollmentCode(data): the enrollment code the person scanned or typed; returns it, or null to cancel.")
            case .enrollmentCodeShown:
                w.line("//   showEnrollmentCode(data): shows data.enrollment_code and data.enrollment_qr_svg to the new phone; returns true")
                w.line("//     once it is scanned, or false to withdraw it.")
            case .biometricAuthentication, .transactionSigning, .biometricRegistration, .deviceRegistration:
                break
            }
        }
        if plan.cases.contains(where: \.confirms) {
            w.line("//   confirm(data): shows what is asked (data.request_context, data.approval_data or data.authorization_details and")
            w.line("//     data.binding_message); returns true to sign it, false to deny.")
        }
        if plan.usesKeys {
            w.line("// `authenticator` is your app's bridge to the phone's key store, with these methods of the Swift and Android SDKs'")
            w.line("// Authenticator (each may be async; those named for a step return its input):")
            for method in authenticatorMethods { w.line("//   \(method)") }
        }
        if plan.needsUserIdentifier {
            w.line("// `userIdentifier`: the user whose key signs in, when the step does not name one.")
        }
        startOptionLines.forEach { w.comment($0) }
        w.line("// Returns the response at action:success (response.token is the signed token, for your backend to verify);")
        w.line("// throws a CountersignError when the journey is rejected.")

        var parameters = plan.startsFromPush ? ["savedState", "ui"] : ["clientId", "ui"]
        if plan.usesKeys { parameters.append("authenticator") }
        if plan.needsUserIdentifier { parameters.append("userIdentifier") }
        let startOptions = startOptionNames.isEmpty ? "" : "{ " + startOptionNames.joined(separator: ", ") + " }"
        if !startOptions.isEmpty { parameters.append(startOptions + " = {}") }
        w.block("export async function \(plan.functionName)(\(parameters.joined(separator: ", "))) {") { w in
            if plan.startsFromPush {
                w.line("// Call initialize({ clientId, serverPath }) first.")
                w.line("let response = restoreFromSerializedState(savedState);")
            } else {
                w.line("initialize({ clientId });")
                let options = startOptions.isEmpty ? "" : ", " + startOptions
                w.line("let response = await startJourney(\(CodeText.javaScriptString(plan.journey.id))\(options));")
            }
            if plan.registers { w.line("let registeredUser = null;") }
            w.block("for (;;) {") { w in
                w.line("if (response.error && response.journeyStepId !== JourneyStepId.Rejection) await ui.showError(response.error);")
                w.block("switch (response.journeyStepId) {") { w in
                    for presented in plan.cases {
                        stepCase(presented, formMethod: formMethod[presented.id] ?? "form", &w)
                    }
                    finalCases(&w)
                }
            }
        }
        return w.text
    }

    private var platformLines: [String] {
        if plan.startsFromPush {
            return [
                "This journey runs on a phone and starts only from a push, with a proof signed by the device key",
                "(POST /v1/mobile-approve/start), which the browser SDK cannot make: the Swift and Android SDKs run it",
                "(startMobileApproveJourney; see their code). A JavaScript app on a phone can answer it once its native",
                "layer has started it and handed the interaction over in the form serializeState() writes.",
            ]
        }
        if plan.runsOnPhone {
            return [
                "This journey runs on a phone: the server starts it only for a native client, and its steps are answered",
                "with keys kept on the phone, which the browser SDK does not hold. The Swift and Android SDKs run it (see",
                "their code); a JavaScript app on a phone runs it with this code and a native client's id.",
            ]
        }
        var lines = ["Runs in the browser with the browser SDK, which the server serves at /sdk/countersign.js; start it with a web client's id."]
        for journey in plan.mobileJourneys {
            lines.append("The phone answers its approval with the journey '\(journey)': see that journey's Swift or Android code.")
        }
        return lines
    }

    /// The `authenticator` methods the code calls.
    private var authenticatorMethods: [String] {
        var methods: [String] = []
        if plan.has(.biometricRegistration) { methods.append("registerNativeBiometrics(userIdentifier)") }
        if plan.has(.deviceRegistration) { methods.append("registerDevice(challenge): with the device's name, model and push registration") }
        if plan.has(.biometricAuthentication) { methods.append("authenticateNativeBiometrics(userIdentifier, challenge)") }
        if plan.cases.contains(where: { $0.kind == .transactionSigning && ($0.signsApprovalData || !$0.signsAuthorizationRequest) }) {
            methods.append("approvalNativeBiometrics(userIdentifier, approvalData, nonce, challenge)")
        }
        if plan.cases.contains(where: { $0.kind == .transactionSigning && $0.signsAuthorizationRequest }) {
            methods.append("authorizationRequestNativeBiometrics(userIdentifier, authorizationDetails, bindingMessage, nonce, challenge)")
        }
        if plan.registers { methods.append("keepRegisteredKeys(userIdentifier), discardRegisteredKeys(userIdentifier)") }
        return methods
    }

    /// The options of `startJourney` the journey reads.
    private var startOptionNames: [String] {
        guard !plan.startsFromPush else { return [] }
        return (plan.requestParams.isEmpty ? [] : ["additionalParams"]) + (plan.needsStartApprovalData ? ["approvalData"] : [])
    }

    private var startOptionLines: [String] {
        var lines: [String] = []
        if !plan.startsFromPush, !plan.requestParams.isEmpty {
            let names = plan.requestParams.map { $0 == "*" ? "(the whole object)" : $0 }.joined(separator: ", ")
            lines.append("`additionalParams`: what the journey reads as @policy.request().params: \(names).")
        }
        if !plan.startsFromPush, plan.needsStartApprovalData {
            lines.append("`approvalData`: the transaction the person signs on the phone (at most 10 string values).")
        }
        return lines
    }

    private func caseLabel(_ presented: PresentedStep) -> String {
        Self.stepConstant(presented.kind) ?? CodeText.javaScriptString(presented.id)
    }

    private func submit(_ option: String, _ data: String? = nil) -> String {
        "response = await submitClientResponse(ClientResponseOptionType.\(option)\(data.map { ", " + $0 } ?? ""));"
    }

    private func stepCase(_ presented: PresentedStep, formMethod: String, _ w: inout CodeWriter) {
        w.block("case \(caseLabel(presented)): {") { w in
            for note in plan.caseNotes(presented) { w.comment(note) }
            switch presented.kind {
            case .form:
                w.line("const answer = await ui.\(formMethod)(response.data);")
                cancelIf("answer === null", &w)
                var names = NameAllocator(reserved: Self.keywords.union(Self.locals))
                let bound = presented.fields.map { field in (field, names.claim(CodeName.sanitized(field.name, fallback: "field"))) }
                if bound.isEmpty {
                    w.line(submit("ClientInput", "{}"))
                } else {
                    let members = bound.map { field, name in field.name == name ? name : "\(CodeText.javaScriptString(field.name)): \(name)" }
                    w.line("const { \(members.joined(separator: ", ")) } = answer;")
                    w.line(submit("ClientInput", "{ \(members.joined(separator: ", ")) }"))
                }
            case .approveOnPhone:
                if presented.asksForDevice {
                    w.block("if (Array.isArray(response.data?.devices)) {") { w in
                        w.line("const code = await ui.chooseDevice(response.data.devices);")
                        cancelIf("code === null", &w)
                        w.line(submit("ClientInput", "{ selected_device_code: code }"))
                        w.line("break;")
                    }
                }
                w.line("// To stop waiting: submitClientResponse(ClientResponseOptionType.Cancel); to push to the phone again,")
                w.line("// while data.resend_attempts_left: submitClientResponse(ClientResponseOptionType.Resend).")
                w.line("await ui.waitingForPhone(response.data);")
                w.line("response = await waitForMobileApproval(response, { onUpdate: (update) => ui.waitingForPhone(update.data) });")
            case .webCode:
                w.line("const code = await ui.typeWebCode(response.data);")
                cancelIf("code === null", &w)
                w.line(submit("ClientInput", "{ passcode: code }"))
            case .enrollmentCode:
                w.line("const code = await ui.enrollmentCode(response.data);")
                cancelIf("code === null", &w)
                w.line(submit("ClientInput", "{ enrollment_code: code }"))
            case .enrollmentCodeShown:
                w.line("const scanned = await ui.showEnrollmentCode(response.data);")
                w.line("response = scanned")
                w.indented { w in
                    w.line("? await submitClientResponse(ClientResponseOptionType.ClientInput, {})")
                    w.line(": await submitClientResponse(ClientResponseOptionType.Cancel);")
                }
            case .biometricRegistration:
                w.line("registeredUser = response.data?.user_identifier;")
                w.line(submit("ClientInput", "await authenticator.registerNativeBiometrics(registeredUser)"))
            case .deviceRegistration:
                w.line("registeredUser = response.data?.user_identifier;")
                w.line(submit("ClientInput", "await authenticator.registerDevice(response.data?.challenge)"))
            case .biometricAuthentication:
                if presented.confirms { confirmOrDeny(&w) }
                let user = plan.needsUserIdentifier ? "response.data?.user_identifier ?? userIdentifier" : "response.data?.user_identifier"
                w.line("const user = \(user);")
                w.line(submit("ClientInput", "await authenticator.authenticateNativeBiometrics(user, response.data?.biometrics_challenge)"))
            case .transactionSigning:
                confirmOrDeny(&w)
                w.line("const { user_identifier: user, nonce, biometrics_challenge: challenge } = response.data;")
                let signRequest = [
                    "const { authorization_details: details, binding_message: message } = response.data;",
                    submit("ClientInput", "await authenticator.authorizationRequestNativeBiometrics(user, details, message, nonce, challenge)"),
                ]
                let signApprovalData = submit("ClientInput", "await authenticator.approvalNativeBiometrics(user, response.data.approval_data, nonce, challenge)")
                switch (presented.signsApprovalData, presented.signsAuthorizationRequest) {
                case (true, true):
                    // A backend client's request carries authorization details; a transaction, approval data.
                    w.block("if (response.data.authorization_details) {") { w in
                        signRequest.forEach { w.line($0) }
                        w.line("break;")
                    }
                    w.line(signApprovalData)
                case (false, true):
                    signRequest.forEach { w.line($0) }
                default:
                    w.line(signApprovalData)
                }
            }
            w.line("break;")
        }
    }

    private func cancelIf(_ condition: String, _ w: inout CodeWriter) {
        w.block("if (\(condition)) {") { w in
            w.line(submit("Cancel"))
            w.line("break;")
        }
    }

    private func confirmOrDeny(_ w: inout CodeWriter) {
        w.block("if (!(await ui.confirm(response.data))) {") { w in
            w.line("// Denied. With { reason: 'not_me' } the server learns the person did not ask for it at all.")
            w.line(submit("Cancel"))
            w.line("break;")
        }
    }

    private func finalCases(_ w: inout CodeWriter) {
        w.line("case JourneyStepId.Success:")
        w.indented { w in
            w.comment(plan.successNote)
            if plan.registers {
                w.line("// The registration succeeded: the phone signs with its new keys from now on.")
                w.line("await authenticator.keepRegisteredKeys(registeredUser);")
            }
            if plan.has(.deviceRegistration) {
                w.line("// response.data.device_id: the registered device's id; keep it for the pushes to come.")
            }
            w.line("return response;")
        }
        w.line("case JourneyStepId.Rejection:")
        w.indented { w in
            w.comment(plan.rejectionNote)
            if plan.registers {
                w.line("if (registeredUser) await authenticator.discardRegisteredKeys(registeredUser);")
            }
            w.line("throw new CountersignError(response.error?.code ?? 'rejected', response.error?.message ?? 'The journey was rejected.');")
        }
        w.line("default:")
        w.indented { w in
            for note in plan.defaultNotes { w.comment(note) }
            w.line("throw new CountersignError('unexpected_step', `Unexpected step ${response.journeyStepId}.`);")
        }
    }
}
