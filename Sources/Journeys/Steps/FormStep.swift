import CountersignCore

/// `login_form` and `collect_information`: show a form, accept the fields its schema declares.
/// The step's output is the accepted fields, e.g. `@login.email`.
struct FormStep: StepBehavior {
    var configuration: StepConfiguration {
        StepConfiguration(required: ["form_id", "schema"], known: ["form_id", "schema"]) { config in
            guard let schema = config["schema"], schema != .null else { return nil }
            return FormSchema.problem(in: schema).map { "bad 'schema': \($0)" }
        }
    }

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        let formID = environment.string("form_id") ?? environment.step.id
        let schema = environment.config["schema"] ?? .null
        return .present(journeyStepID: formID, data: ["form_id": .string(formID), "schema": schema], secrets: [:])
    }

    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        switch FormSchema.validate(input, against: environment.config["schema"] ?? .null) {
        case .success(let fields): return .next(output: .object(fields))
        case .failure(let error): throw ClientResponseNotValid(error.message)
        }
    }
}
