import Journeys
import Testing

@Suite("Journey documents: output variables, behaviours and branch schemas")
struct StepOptionsLoaderTests {
    static let valid = """
        id: payment
        steps:
          - id: sign
            type: mobile_biometrics_transaction_signing
            config:
              external_user_id: "@policy.request().params.external_user_id"
              output_variable: signed
              error_output_variable: sign_error
              branch_output_variable: choice
              failure_behavior: failure_branch
              cancel_behavior: cancel_branch
            next: done
            failure: failed
            cancel: failed
            branches:
              later:
                next: failed
                display_name: Later
                schema: {type: object, properties: {days: {type: integer}}}
          - id: done
            type: reject
            config: {data: {signed: "@signed.nonce", choice: "@choice.days", error: "@sign_error.code"}}
          - id: failed
            type: reject
        """

    func problems(_ yaml: String) -> [String] {
        switch JourneyLoader.parse(yaml: yaml, file: "payment.yaml") {
        case .success: []
        case .failure(let error): error.problems.map { "\($0.stepID ?? "-"): \($0.reason)" }
        }
    }

    @Test("a web-to-mobile step's choices are words it knows: a typo is refused, not read as the default", arguments: [
        ("unknown_user: decoy", nil), ("unknown_user: reject", nil), ("device_selection: most_recent", nil),
        ("unknown_user: rejct", "config 'unknown_user' must be one of: decoy, reject"),
        ("unknown_user: true", "config 'unknown_user' must be one of: decoy, reject"),
        ("device_selection: newest", "config 'device_selection' must be one of: ask, most_recent"),
    ] as [(String, String?)])
    func webToMobileChoices(line: String, reason: String?) {
        let yaml = """
            id: sign_in
            steps:
              - id: approve
                type: web_to_mobile_authentication
                config:
                  external_user_id: "@policy.request().params.email"
                  mobile_journey: mobile_approve
                  \(line)
                next: done
              - id: done
                type: complete
            """
        let found = problems(yaml)
        if let reason {
            #expect(found.contains { $0 == "approve: \(reason)" }, "\(found)")
        } else {
            #expect(found == [])
        }
    }

    @Test("a step with every option loads, and expressions may read its declared variables")
    func validDocument() throws {
        #expect(problems(Self.valid) == [])
        let journey = try JourneyLoader.parse(yaml: Self.valid, file: "payment.yaml").get()
        #expect(journey.step("sign")?.branches["later"]?.displayName == "Later")
        #expect(journey.step("sign")?.branches["later"]?.target == "failed")
    }

    @Test("each rule refuses a bad document, naming the step and the reason", arguments: [
        ("failure_branch without a failure step", "    failure: failed\n", "", "failure_behavior 'failure_branch' needs a 'failure' step"),
        ("abort with a failure step", "failure_behavior: failure_branch", "failure_behavior: abort", "failure_behavior 'abort' takes no 'failure' step"),
        ("unknown failure behaviour", "failure_behavior: failure_branch", "failure_behavior: retry", "failure_behavior must be 'failure_branch' or 'abort'"),
        ("cancel_branch without a cancel step", "    cancel: failed\n", "", "cancel_behavior 'cancel_branch' needs a 'cancel' step"),
        ("abort with a cancel step", "cancel_behavior: cancel_branch", "cancel_behavior: abort", "cancel_behavior 'abort' takes no 'cancel' step"),
        ("output variable that is not a name", "output_variable: signed", "output_variable: my-result", "'output_variable' must be a name"),
        ("branch mapping without next", "        next: failed\n        display_name", "        display_name", "branch 'later' must name a step"),
        ("branch with a bad schema", "days: {type: integer}", "days: {type: date}", "branch 'later': bad 'schema'"),
        ("branch with an unknown key", "display_name: Later", "label: Later", "branch 'later': unknown key 'label'"),
        ("expression reading an undeclared variable", "\"@choice.days\"", "\"@chosen.days\"", "'chosen', which is not a step or output variable"),
        ("transaction signing without external_user_id", "      external_user_id: \"@policy.request().params.external_user_id\"\n", "", "missing required config 'external_user_id'"),
    ])
    func rule(name: String, find: String, replace: String, reason: String) {
        let yaml = Self.valid.replacingOccurrences(of: find, with: replace)
        #expect(yaml != Self.valid, "the substitution for \(name) must apply")
        let found = problems(yaml)
        #expect(found.contains { $0.contains(reason) }, "\(name): \(found)")
    }
}
