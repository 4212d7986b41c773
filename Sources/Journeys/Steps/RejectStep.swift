import CountersignCore

/// `reject`: end the journey refusing access. Config: `error_code`, `message`, and `data` shown to the
/// client (expressions allowed).
struct RejectStep: StepBehavior {
    static let errorCode = ConfigKey.text("error_code")
    static let message = ConfigKey.text("message")
    static let data = ConfigKey.value("data")

    var configuration: StepConfiguration { StepConfiguration(keys: [Self.errorCode.rule, Self.message.rule, Self.data.rule]) }

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        let error = WireError(
            code: environment[Self.errorCode] ?? ErrorCode.rejected,
            message: environment[Self.message] ?? "Access was rejected.")
        return .outcome(.finish(.rejection(error, data: environment[Self.data])))
    }
}
