import CountersignCore
import Journeys

/// A journey's handler for the Android SDK (`countersign.client`, `countersign.core`): an object named
/// after the journey, in a package of its own, holding its forms' fields, a `Ui` interface of what the app
/// shows and asks, and `run`, which starts the journey with an `OrchestrationClient` and answers each step,
/// with the `Authenticator`'s keys where a step signs.
///
/// The Android SDK runs a phone journey with a native client's id, a push journey from the push's payload
/// (`startMobileApproveJourney`), and a web journey with a web client's id, as a browser would. It has no
/// call that signs a backend client's request (OpenID CIBA): such a step is answered with `failure`.
struct KotlinIntegration {
    let plan: IntegrationPlan

    init(_ plan: IntegrationPlan) {
        self.plan = plan
    }

    static let keywords: Set<String> = [
        "as", "break", "class", "continue", "do", "else", "false", "for", "fun", "if", "in", "interface", "is", "null",
        "object", "package", "return", "super", "this", "throw", "true", "try", "typealias", "typeof", "val", "var", "when",
        "while",
    ]

    /// The `Ui` functions every journey's code may declare, and the names `run` uses.
    static let reserved: Set<String> = [
        "Ui", "Rejected", "run", "showError", "chooseDevice", "waitingForPhone", "typeWebCode", "enrollmentCode",
        "showEnrollmentCode", "confirm", "client", "ui", "response", "authenticator", "equals", "hashCode", "toString",
    ]

    /// A form: its `Ui` function, its class, and its fields with their property names.
    struct Form {
        let presented: PresentedStep
        let method: String
        let type: String
        let fields: [(field: FormField, property: String)]
    }

    static func stepConstant(_ kind: PresentedStep.Kind) -> String? {
        switch kind {
        case .form: nil
        case .approveOnPhone: "JourneyStepId.MOBILE_APPROVE_AUTHENTICATION"
        case .webCode: "JourneyStepId.OTP_VALIDATION"
        case .enrollmentCode: "JourneyStepId.ENROLLMENT_CODE"
        case .enrollmentCodeShown: "JourneyStepId.ENROLLMENT_CODE_ISSUED"
        case .biometricRegistration: "JourneyStepId.MOBILE_BIOMETRICS_REGISTRATION"
        case .deviceRegistration: "JourneyStepId.DEVICE_REGISTRATION"
        case .biometricAuthentication: "JourneyStepId.MOBILE_BIOMETRICS_AUTHENTICATION"
        case .transactionSigning: "JourneyStepId.MOBILE_BIOMETRICS_TRANSACTION_SIGNING"
        }
    }

    static func kotlinType(_ type: FormField.FieldType) -> String {
        switch type {
        case .string: "String"
        case .number: "Double"
        case .integer: "Long"
        case .boolean: "Boolean"
        }
    }

    /// The package the file declares: one per journey, so that every journey's code compiles together.
    var packageName: String {
        var names = NameAllocator(reserved: Self.keywords)
        return "com.example.countersign." + names.claim(plan.fileStem)
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

        var body = CodeWriter(indent: "    ")
        body.block("object \(plan.typeName) {") { w in
            for form in forms {
                w.comment("The answer to the form '\(form.presented.id)'.")
                let properties = form.fields.map { field, property in
                    "val \(property): \(Self.kotlinType(field.type))\(field.required ? "" : "? = null")"
                }
                w.line("class \(form.type)(\(properties.joined(separator: ", ")))")
                w.line()
            }
            uiInterface(forms, &w)
            w.line()
            w.line("/** The journey was rejected: [error] says why. */")
            w.line("class Rejected(val error: WireError?) : Exception(error?.message ?: \"The journey was rejected.\")")
            w.line()
            runFunction(forms, &w)
        }
        let bodyText = body.text

        var w = CodeWriter(indent: "    ")
        for line in plan.headerLines(sdk: "the Android SDK", platform: platformLines) { w.comment(line) }
        w.line("package \(packageName)")
        w.line()
        // Only what the code uses: an unused import is a compiler warning.
        let used = Self.identifiers(in: bodyText)
        for name in Self.imports where used.contains(String(name.split(separator: ".").last ?? "")) {
            w.line("import \(name)")
        }
        w.line()
        return w.text + bodyText
    }

    /// Every name the code may import.
    static let imports = [
        "countersign.client.Authenticator", "countersign.client.CountersignException", "countersign.client.OrchestrationClient",
        "countersign.core.ClientResponseOptionType", "countersign.core.ErrorCode", "countersign.core.IdoResponse",
        "countersign.core.JourneyStepId", "countersign.core.JsonValues", "countersign.core.WireError", "kotlinx.coroutines.delay",
        "org.json.JSONArray", "org.json.JSONObject",
    ]

    /// The words of `code` made of letters, digits and underscores.
    static func identifiers(in code: String) -> Set<String> {
        Set(code.split { !($0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_")) }.map(String.init))
    }

    private var platformLines: [String] {
        var lines: [String]
        if plan.startsFromPush {
            lines = ["Runs on a registered phone, started from a push: the payload the phone received, as it came."]
        } else if plan.runsOnPhone {
            lines = ["Runs on the phone, started with a native client's id."]
        } else {
            lines = [
                "A web journey: the server starts it only for a web client, so this code runs it as a browser would, with a",
                "web client's id (a kiosk, a test). A web page uses the JavaScript code.",
            ]
            for journey in plan.mobileJourneys {
                lines.append("The phone answers its approval with the journey '\(journey)': see that journey's code.")
            }
        }
        lines.append("Put it in your app's package; the one below keeps each journey's code apart.")
        return lines
    }

    private func uiInterface(_ forms: [Form], _ w: inout CodeWriter) {
        w.line("/** What the app shows and asks at the journey's steps. */")
        w.block("interface Ui {") { w in
            w.line("/** The last answer was refused ([WireError.code], [WireError.message]); the step is shown again. */")
            w.line("suspend fun showError(error: WireError)")
            for form in forms {
                let fields = FormField.summary(of: form.presented.fields)
                w.comment("The form '\(form.presented.id)' (its schema is data's \"schema\"): \(fields); null to cancel.")
                w.line("suspend fun \(form.method)(data: JSONObject?): \(form.type)?")
            }
            if plan.cases.contains(where: \.asksForDevice) {
                w.line("/** The person has several phones (`[{code, name}]`): the chosen code, or null to cancel. */")
                w.line("suspend fun chooseDevice(devices: JSONArray): String?")
            }
            if plan.has(.approveOnPhone) {
                w.line("/**")
                w.line(" * Called before each look at the phone's answer: data's `otp`, when set, is the code the person types on the")
                w.line(" * phone, `push_status` how the push went. False to cancel.")
                w.line(" */")
                w.line("suspend fun waitingForPhone(data: JSONObject?): Boolean")
            }
            if plan.has(.webCode) {
                w.line("/** The code the browser shows (data's `code_length` digits), or null to cancel. */")
                w.line("suspend fun typeWebCode(data: JSONObject?): String?")
            }
            if plan.has(.enrollmentCode) {
                w.line("/** The enrollment code the person scanned or typed, or null to cancel. */")
                w.line("suspend fun enrollmentCode(data: JSONObject?): String?")
            }
            if plan.has(.enrollmentCodeShown) {
                w.line("/** Shows data's `enrollment_code` and its QR code to the new phone: true once it is scanned, false to withdraw it. */")
                w.line("suspend fun showEnrollmentCode(data: JSONObject?): Boolean")
            }
            if plan.cases.contains(where: \.confirms) {
                w.line("/** Shows what is asked (`request_context`, `approval_data`): true to sign it, false to deny. */")
                w.line("suspend fun confirm(data: JSONObject?): Boolean")
            }
        }
    }

    private func runFunction(_ forms: [Form], _ w: inout CodeWriter) {
        var parameters = ["client: OrchestrationClient", "ui: Ui"]
        if plan.usesKeys || plan.startsFromPush { parameters.append("authenticator: Authenticator") }
        if plan.startsFromPush { parameters += ["payload: Map<String, String>", "deviceId: String"] }
        if plan.needsUserIdentifier { parameters.append("userIdentifier: String") }
        if plan.has(.deviceRegistration) { parameters += ["deviceName: String", "deviceModel: String"] }
        let readsParams = !plan.startsFromPush && !plan.requestParams.isEmpty
        let readsApprovalData = !plan.startsFromPush && plan.needsStartApprovalData
        if readsParams { parameters.append("additionalParams: JSONObject") }
        if readsApprovalData { parameters.append("approvalData: Map<String, String>") }
        if readsParams {
            let names = plan.requestParams.map { $0 == "*" ? "(the whole object)" : $0 }.joined(separator: ", ")
            w.comment("additionalParams: what the journey reads as @policy.request().params: \(names).")
        }
        if readsApprovalData { w.line("// approvalData: the transaction the person signs (at most 10 string values).") }
        w.line("/**")
        w.line(" * Runs the journey to its end: the response at `action:success` (its token is for your backend to verify);")
        w.line(" * throws [Rejected] when it is rejected.")
        if plan.has(.deviceRegistration) {
            w.line(" * Call [OrchestrationClient.setPushToken] before, so that the server can push to this phone.")
        }
        w.line(" */")
        w.block("suspend fun run(\(parameters.joined(separator: ", "))): IdoResponse {") { w in
            if plan.startsFromPush {
                w.line("var response = client.startMobileApproveJourney(payload, deviceId, authenticator)")
            } else {
                let options = (readsParams ? ", additionalParams" : "") + (readsApprovalData ? ", approvalData = approvalData" : "")
                w.line("var response = client.startJourney(\(CodeText.kotlinString(plan.journey.id))\(options))")
            }
            if plan.registers { w.line("var registeredUser: String? = null") }
            w.block("while (true) {") { w in
                w.line("val error = response.error")
                w.line("if (error != null && response.journeyStepId != JourneyStepId.REJECTION) ui.showError(error)")
                w.block("when (response.journeyStepId) {") { w in
                    for presented in plan.cases {
                        stepCase(presented, form: forms.first(where: { $0.presented.id == presented.id }), &w)
                    }
                    finalCases(&w)
                }
            }
        }
    }

    private func submit(_ option: String, _ data: String? = nil) -> String {
        "client.submitClientResponse(ClientResponseOptionType.\(option)\(data.map { ", " + $0 } ?? ""))"
    }

    /// `response = if (condition) { cancel } else { <answer lines> }`.
    private func cancelOr(_ condition: String, note: String? = nil, _ answer: [String], _ w: inout CodeWriter) {
        w.block("response = if (\(condition)) {", "") { w in
            if let note { w.line(note) }
            w.line(submit("CANCEL"))
        }
        w.block("} else {") { w in answer.forEach { w.line($0) } }
    }

    private func stepCase(_ presented: PresentedStep, form: Form?, _ w: inout CodeWriter) {
        w.block("\(Self.stepConstant(presented.kind) ?? CodeText.kotlinString(presented.id)) -> {") { w in
            for note in plan.caseNotes(presented) { w.comment(note) }
            switch presented.kind {
            case .form:
                guard let form else { break }
                if form.fields.isEmpty {
                    cancelOr("ui.\(form.method)(response.data) == null", [submit("CLIENT_INPUT", "JSONObject()")], &w)
                    break
                }
                w.line("val answer = ui.\(form.method)(response.data)")
                // A null value leaves its member out (`JSONObject.put`).
                let puts = form.fields.map { field, property in "    .put(\(CodeText.kotlinString(field.name)), answer.\(property))" }
                cancelOr("answer == null", ["val fields = JSONObject()"] + puts + [submit("CLIENT_INPUT", "fields")], &w)
            case .approveOnPhone:
                if presented.asksForDevice {
                    w.line("val devices = response.data?.optJSONArray(\"devices\")")
                    w.block("if (devices != null) {", "") { w in
                        w.line("val code = ui.chooseDevice(devices)")
                        cancelOr("code == null", [submit("CLIENT_INPUT", "JSONObject().put(\"selected_device_code\", code)")], &w)
                    }
                }
                w.block("\(presented.asksForDevice ? "} else " : "")if (!ui.waitingForPhone(response.data)) {", "") { w in
                    w.line("response = " + submit("CANCEL"))
                }
                w.block("} else {") { w in
                    w.line("// To push to the phone again, while data's resend_attempts_left is above 0: ClientResponseOptionType.RESEND.")
                    w.line("delay(1000L * (response.data?.optLong(\"polling_interval\", 3L) ?: 3L))")
                    w.block("try {", "") { w in
                        w.line("response = " + submit("CLIENT_INPUT", "JSONObject()"))
                    }
                    w.block("} catch (refused: CountersignException.Server) {") { w in
                        w.line("if (refused.errorCode != ErrorCode.SLOW_DOWN) throw refused")
                        w.line("delay(1000L * (refused.retryAfterSeconds ?: 0L))")
                    }
                }
            case .webCode:
                w.line("val code = ui.typeWebCode(response.data)")
                cancelOr("code == null", [submit("CLIENT_INPUT", "JSONObject().put(\"passcode\", code)")], &w)
            case .enrollmentCode:
                w.line("val code = ui.enrollmentCode(response.data)")
                cancelOr("code == null", [submit("CLIENT_INPUT", "JSONObject().put(\"enrollment_code\", code)")], &w)
            case .enrollmentCodeShown:
                cancelOr("!ui.showEnrollmentCode(response.data)", [submit("CLIENT_INPUT", "JSONObject()")], &w)
            case .biometricRegistration:
                w.line("val user = response.dataString(\"user_identifier\") ?: \"\"")
                w.line("registeredUser = user")
                w.line("response = " + submit("CLIENT_INPUT", "authenticator.registerNativeBiometrics(user)"))
            case .deviceRegistration:
                w.line("registeredUser = response.dataString(\"user_identifier\")")
                w.line("val challenge = response.dataString(\"challenge\") ?: \"\"")
                w.line("response = " + submit("CLIENT_INPUT", "authenticator.registerDevice(challenge, deviceName, deviceModel, client.pushRegistration)"))
            case .biometricAuthentication:
                let fallback = plan.needsUserIdentifier ? "userIdentifier" : "\"\""
                let answer = [
                    "val user = response.dataString(\"user_identifier\") ?: \(fallback)",
                    "val challenge = response.dataString(\"biometrics_challenge\") ?: \"\"",
                    submit("CLIENT_INPUT", "authenticator.authenticateNativeBiometrics(user, challenge)"),
                ]
                if presented.confirms {
                    cancelOr("!ui.confirm(response.data)", note: Self.denialNote, answer, &w)
                } else {
                    answer.dropLast().forEach { w.line($0) }
                    w.line("response = " + (answer.last ?? ""))
                }
            case .transactionSigning:
                transactionSigning(presented, &w)
            }
        }
    }

    private static let denialNote = "// Denied. With data {\"reason\": DenialReason.NOT_MINE} the server learns the person did not ask at all."

    private func transactionSigning(_ presented: PresentedStep, _ w: inout CodeWriter) {
        let refuseRequest = [
            "// The Android SDK has no call that checks and signs a backend client's request (authorization_details and",
            "// binding_message): the app says it cannot answer it.",
            submit("FAILURE", "JSONObject().put(\"message\", \"This app cannot sign a backend client's request.\")"),
        ]
        let signApprovalData = [
            "val user = response.dataString(\"user_identifier\") ?: \"\"",
            "val transaction = JsonValues.strings(response.data?.optJSONObject(\"approval_data\"))",
            "val nonce = response.dataString(\"nonce\") ?: \"\"",
            "val challenge = response.dataString(\"biometrics_challenge\") ?: \"\"",
            submit("CLIENT_INPUT", "authenticator.approvalNativeBiometrics(user, transaction, nonce, challenge)"),
        ]
        guard presented.signsApprovalData || !presented.signsAuthorizationRequest else {
            refuseRequest.dropLast().forEach { w.line($0) }
            w.line("response = " + (refuseRequest.last ?? ""))
            return
        }
        w.block("response = if (!ui.confirm(response.data)) {", "") { w in
            w.line(Self.denialNote)
            w.line(submit("CANCEL"))
        }
        if presented.signsAuthorizationRequest {
            w.block("} else if (response.data?.has(\"authorization_details\") == true) {", "") { w in
                refuseRequest.forEach { w.line($0) }
            }
        }
        w.block("} else {") { w in signApprovalData.forEach { w.line($0) } }
    }

    private func finalCases(_ w: inout CodeWriter) {
        w.block("JourneyStepId.SUCCESS -> {") { w in
            w.comment(plan.successNote)
            if plan.registers {
                w.line("// The registration succeeded: the phone signs with its new keys from now on.")
                w.line("registeredUser?.let { authenticator.keepRegisteredKeys(it) }")
            }
            if plan.has(.deviceRegistration) {
                w.line("// response.dataString(\"device_id\"): the registered device's id; keep it for the pushes to come.")
            }
            w.line("return response")
        }
        w.block("JourneyStepId.REJECTION -> {") { w in
            w.comment(plan.rejectionNote)
            if plan.registers {
                w.line("registeredUser?.let { authenticator.discardRegisteredKeys(it) }")
            }
            w.line("throw Rejected(response.error)")
        }
        w.block("else -> {") { w in
            for note in plan.defaultNotes { w.comment(note) }
            w.line("throw IllegalStateException(\"Unexpected step ${response.journeyStepId}.\")")
        }
    }
}
