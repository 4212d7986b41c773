import CountersignCore

/// `reject`: end the journey refusing access. Config: `error_code`, `message`, and `data` shown to the
/// client (expressions allowed).
struct RejectStep: StepBehavior {
    var configuration: StepConfiguration { StepConfiguration(known: ["error_code", "message", "data"]) }

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        let error = WireError(
            code: environment.string("error_code") ?? ErrorCode.rejected,
            message: environment.string("message") ?? "Access was rejected.")
        return .outcome(.finish(.rejection(error, data: environment.config["data"])))
    }
}
