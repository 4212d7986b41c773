import CountersignCore

/// `login_form` and `collect_information`: show a form, accept the fields its schema declares.
/// The step's output is the accepted fields, e.g. `@login.email`.
struct FormStep: StepBehavior {
    var configuration: StepConfiguration {
        StepConfiguration(keys: [Self.formID.rule, Self.schema.rule]) { config in
            guard let schema = Self.schema.read(from: config) else { return nil }
            return FormSchema.problem(in: schema).map { "bad 'schema': \($0)" }
        }
    }

    static let formID = ConfigKey.text("form_id", required: true)
    static let schema = ConfigKey.value("schema", required: true)

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        let formID = environment[Self.formID] ?? environment.step.id
        let schema = environment[Self.schema] ?? .null
        return .present(journeyStepID: formID, data: ["form_id": .string(formID), "schema": schema], secrets: [:])
    }

    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        switch FormSchema.validate(input, against: environment[Self.schema] ?? .null) {
        case .success(let fields): return .next(output: .object(fields))
        case .failure(let error): throw ClientResponseNotValid(error.message)
        }
    }
}
