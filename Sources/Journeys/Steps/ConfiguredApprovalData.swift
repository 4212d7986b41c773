import CountersignCore

extension ConfigKey where Value == JSONValue? {
    /// `approval_data`: an object whose values may be expressions, or one expression giving an object.
    static var approvalData: Self { .value("approval_data") }
}

extension StepEnvironment {
    /// The step's `approval_data` (an object whose values may be expressions, or one expression giving
    /// an object), else the start call's; nil when there is neither. Data breaking the rules becomes an
    /// `invalid_approval_data` failure.
    func approvalData(_ state: InteractionState) -> Result<ApprovalData?, WireError> {
        guard let configured = self[.approvalData] else { return .success(state.approvalData) }
        do {
            return .success(try ApprovalData(json: configured))
        } catch {
            return .failure(WireError(code: ErrorCode.invalidApprovalData, message: error.description))
        }
    }
}
