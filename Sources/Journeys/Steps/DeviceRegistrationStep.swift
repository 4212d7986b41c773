import CountersignCore

/// `device_registration`: bind a device key to the user. The phone proves it holds the key by signing
/// the step's challenge; the server assigns the device id.
struct DeviceRegistrationStep: StepBehavior {
    var isPhoneOnly: Bool { true }

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        await environment.enrolling(state) { user in
            let challenge = SecureRandom.challenge()
            return .present(
                journeyStepID: JourneyStepID.deviceRegistration,
                data: ["user_identifier": .string(user.externalUserID), "challenge": .string(challenge)],
                secrets: ["challenge": challenge])
        }
    }

    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        guard let user = state.user, let challenge = environment.secrets["challenge"] else {
            return .failure(WireError(code: ErrorCode.userNotFound, message: "No user."))
        }
        let fields = try ClientInput(input)
        let key = try fields.publicKey("device_public_key", allowRSA: false)
        let signature = try fields.string("signature")
        let name = try fields.string("name")
        let model = try fields.string("model")
        let os = try fields.string("os")
        let push = try fields.object("push")
        guard let channel = PushChannel(rawValue: try push.string("channel")) else {
            throw ClientResponseNotValid("field 'push.channel' must be one of apns, fcm, inbox")
        }
        let pushToken = try push.optionalString("token")
        if channel != .inbox, pushToken?.isEmpty ?? true {
            throw ClientResponseNotValid("field 'push.token' is required for the \(channel.rawValue) channel")
        }
        guard key.verifies(signatureBase64: signature, of: challenge) else {
            return .retry(.invalidCredentials("The device signature does not verify."))
        }
        let deviceID = try await environment.effects.registerDevice(DeviceRegistration(
            userID: user.userID, publicKey: key, name: name, model: model, os: os, pushChannel: channel,
            pushToken: pushToken, pushAppID: try push.optionalString("app_id")))
        state.deviceID = deviceID
        return .next(output: ["device_id": .string(deviceID)])
    }
}
