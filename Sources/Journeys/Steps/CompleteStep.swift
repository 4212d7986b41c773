import CountersignCore

/// `complete`: end the journey successfully and hand the client a token for the identified user.
/// The success data carries `device_id` when the run registered or used a device. The biometric keys
/// the run registered are stored now, in the same commit as the run's end. A user the client only named
/// (`create_user` found them) gets no token: the step fails with `enrollment_required`, except in a
/// development-only journey. A browser whose person approved the run on their phone is handed a
/// `browser_credential` to keep (`rememberBrowser`).
struct CompleteStep: StepBehavior {
    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        if let refusal = environment.onlyNamedUserRefusal(state) { return refusal }
        if let keys = state.biometricKeysToStore {
            try await environment.effects.storeBiometricKeys(keys, onDevice: state.deviceID)
            state.biometricKeysToStore = nil
        }
        var data: [String: JSONValue] = [:]
        if let deviceID = state.deviceID { data["device_id"] = .string(deviceID) }
        var token: String?
        if let user = state.user {
            token = try await environment.effects.issueToken(TokenRequest(
                clientID: state.clientID, user: user, amr: state.amr, authTime: state.authTime,
                deviceID: state.deviceID, journeyID: state.journeyID, approvalData: state.signedApprovalData))
            if state.approvedOnPhoneBy == user.userID {
                data["browser_credential"] = .string(try await environment.effects.rememberBrowser(of: user))
            }
        }
        return .outcome(.finish(.success(data: data.isEmpty ? nil : .object(data), token: token)))
    }
}
