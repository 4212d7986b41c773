import CountersignCore
import Foundation

/// `web_to_mobile_authentication` (journey step id `mobile_approve_authentication`): the browser asks
/// the user's registered phone to approve, then waits.
///
/// Its config keys, with their defaults and bounds, are the `ConfigKey`s below.
///
/// An identifier with no phone (unknown, or whose phones were all revoked) gets, by default, the same
/// waiting step as a registered one, on a decoy that ends as an unanswered approval would: a stranger
/// cannot tell which emails have an account. `unknown_user: reject` ends the step at once with
/// `no_registered_devices` instead.
public struct WebToMobileAuthenticationStep: StepBehavior {
    static let externalUserID = ConfigKey.userIdentifier("external_user_id", required: true)
    static let mobileJourney = ConfigKey.journey("mobile_journey")
    static let additionalData = ConfigKey.value("additional_data")
    static let displayWebOTP = ConfigKey.switch("display_web_otp", default: false)
    static let otpLength = ConfigKey.number("otp_length", default: WebOTP.defaultLength, in: 4...10)
    static let expiresIn = ConfigKey.number("expires_in", default: 300, in: 30...3600)
    static let resendAttempts = ConfigKey.number("resend_attempts", default: 3, in: 0...10)
    static let resendInterval = ConfigKey.number("resend_interval", default: 10, in: 0...300)
    static let pollingInterval = ConfigKey.number("polling_interval", default: 3, in: 2...5)
    static let deviceSelection = ConfigKey.choice("device_selection", default: DeviceSelection.ask)
    static let showDeviceNames = ConfigKey.switch("show_device_names", default: true)
    static let unknownUser = ConfigKey.choice("unknown_user", default: UnknownUser.decoy)
    static let onePendingPerUser = ConfigKey.switch("one_pending_per_user", default: ApprovalLimits.defaults.onePendingPerUser)
    static let backoffSeconds = ConfigKey.number("backoff_seconds", default: Int(ApprovalLimits.defaults.firstBackoff), in: 0...3600)
    static let backoffMaxSeconds = ConfigKey.number(
        "backoff_max_seconds", default: Int(ApprovalLimits.defaults.longestBackoff), in: 0...86400)
    static let notMeBlockSeconds = ConfigKey.number(
        "not_me_block_seconds", default: Int(ApprovalLimits.defaults.notMeBlock), in: 0...604800)
    static let ringsPerHour = ConfigKey.number("rings_per_hour", default: ApprovalLimits.defaults.ringsPerHour, in: 0...100)

    var configuration: StepConfiguration {
        StepConfiguration(keys: [
            Self.externalUserID.rule, Self.mobileJourney.rule, ConfigKey.approvalData.rule, Self.additionalData.rule,
            Self.displayWebOTP.rule, Self.otpLength.rule, Self.expiresIn.rule, Self.resendAttempts.rule, Self.resendInterval.rule,
            Self.pollingInterval.rule, Self.deviceSelection.rule, Self.showDeviceNames.rule, Self.unknownUser.rule,
            Self.onePendingPerUser.rule, Self.backoffSeconds.rule, Self.backoffMaxSeconds.rule, Self.notMeBlockSeconds.rule,
            Self.ringsPerHour.rule,
        ])
    }

    /// Whether a person with several phones picks the one to ring, or the most recently registered rings.
    enum DeviceSelection: String, CaseIterable, Sendable {
        case ask
        case mostRecent = "most_recent"
    }

    /// What an identifier with no phone gets: a decoy waiting step, or `no_registered_devices` at once.
    enum UnknownUser: String, CaseIterable, Sendable {
        case decoy, reject
    }

    static let resendOption = ClientResponseOption(type: .resend, id: "resend", label: "Resend")
    static let expired = WireError(code: ErrorCode.expired, message: "The approval expired before the phone answered.")

    /// What the step keeps between calls, in the interaction's server-side secrets.
    enum Key {
        static let mode = "mode"
        static let deviceCodes = "device_codes"
        static let approvalID = "approval_id"
        static let resendsLeft = "resends_left"
        static let lastPoll = "last_poll"
        static let lastPush = "last_push"
    }

    /// The approval a browser's interaction is waiting on, if it is at this step's waiting screen.
    public static func approvalWaitedOn(in state: InteractionState) -> String? {
        state.current?.secrets[Key.approvalID]
    }

    /// Whom the browser's request goes to.
    enum Addressee {
        case device(UserContext, DeviceSummary)
        /// An identifier with no phone (and the user it names here, if any): a decoy stands in for the approval.
        case nobody(identifier: String, userID: String?)
    }

    func enter(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepEntry {
        let noDevices = StepEntry.outcome(.failure(WireError(
            code: ErrorCode.noRegisteredDevices, message: "The user has no registered device to approve with.")))
        guard let externalUserID = environment[Self.externalUserID] else { return noDevices }
        let found = try await environment.effects.activeDevices(ofUser: externalUserID)
        guard let (user, devices) = found, let newest = devices.first else {
            if environment[Self.unknownUser] == .reject { return noDevices }
            return try await startWaiting(on: .nobody(identifier: externalUserID, userID: found?.user.userID), &state, environment)
        }
        if devices.count > 1, environment[Self.deviceSelection] == .ask {
            // The browser is not signed in yet: with `show_device_names: false` it learns no device's name.
            let showNames = environment[Self.showDeviceNames]
            let choices = devices.enumerated().map { index, device in
                (code: "d\(index + 1)", name: showNames ? device.name : "Phone \(index + 1)", id: device.id)
            }
            return .present(
                journeyStepID: JourneyStepID.mobileApproveAuthentication,
                data: ["devices": .array(choices.map { ["code": .string($0.code), "name": .string($0.name)] })],
                secrets: [
                    Key.mode: "select", "user": externalUserID,
                    Key.deviceCodes: choices.map { "\($0.code)=\($0.id)" }.joined(separator: ","),
                ])
        }
        return try await startWaiting(on: .device(user, newest), &state, environment)
    }

    func receive(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        if environment.secrets[Key.mode] == "select" { return try await select(input, &state, environment) }
        guard let approvalID = environment.secrets[Key.approvalID] else { throw ClientResponseNotValid("no approval is pending") }
        // An approval (or decoy) removed after its retention ended long ago: it expired.
        guard let approval = try await environment.effects.approval(approvalID) else {
            return .failure(Self.expired)
        }
        switch approval.status {
        case .pending:
            if let wait = Self.secondsToWait(since: Key.lastPoll, interval: environment[Self.pollingInterval], environment) {
                throw SlowDown(retryAfter: wait)
            }
            var secrets = environment.secrets
            secrets[Key.lastPoll] = String(environment.now.timeIntervalSince1970)
            var data = state.current?.data?.objectValue ?? [:]
            if let pushStatus = approval.pushStatus { data["push_status"] = .string(pushStatus) }
            return .stillWaiting(data: .object(data), secrets: secrets)
        case .approved:
            // Only an approval a phone answered is approved; a decoy has neither user nor device.
            guard let user = approval.user, let deviceID = approval.deviceID else { throw ClientResponseNotValid("no approval is pending") }
            state.actFor(user)
            state.amr = approval.amr
            state.authTime = approval.authTime
            state.deviceID = deviceID
            state.approvedOnPhoneBy = user.userID
            // An approval with details is approved only when the phone signed them.
            state.signedApprovalData = approval.approvalData
            return .next(output: ["approval_id": .string(approvalID), "device_id": .string(deviceID)])
        case .denied:
            return .failure(WireError(code: ErrorCode.mobileRejected, message: "The request was denied on the phone."))
        case .failed:
            return .failure(WireError(code: approval.failureCode ?? "approval_failed", message: "The approval failed on the phone."))
        case .cancelled:
            return .failure(WireError(code: approval.failureCode ?? ErrorCode.cancelled, message: "The approval was cancelled."))
        case .expired:
            return .failure(Self.expired)
        }
    }

    func extraOptions(secrets: [String: String]) -> [ClientResponseOption] {
        secrets[Key.approvalID] == nil ? [] : [Self.resendOption]
    }

    func resend(_ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        guard let approvalID = environment.secrets[Key.approvalID] else { throw ClientResponseNotValid("nothing to resend") }
        let left = Int(environment.secrets[Key.resendsLeft] ?? "0") ?? 0
        // A resend refused changes nothing, and the browser goes on with the token it holds.
        guard left > 0 else {
            return .stillWaiting(data: state.current?.data, secrets: environment.secrets, error: WireError(
                code: ErrorCode.resendLimitReached, message: "No resend attempts are left."))
        }
        // Paced, so that a script cannot ring the phone with every attempt at once: the push a resend
        // would repeat may still be on its way.
        let interval = environment[Self.resendInterval]
        if let wait = Self.secondsToWait(since: Key.lastPush, interval: interval, environment) {
            return .stillWaiting(data: state.current?.data, secrets: environment.secrets, error: WireError(
                code: ErrorCode.resendTooSoon,
                message: "The request was sent to the phone moments ago; wait \(wait) s before sending it again."))
        }
        try await environment.effects.resendApproval(approvalID, limits: Self.limits(environment))
        var secrets = environment.secrets
        secrets[Key.resendsLeft] = String(left - 1)
        secrets[Key.lastPush] = String(environment.now.timeIntervalSince1970)
        var data = state.current?.data?.objectValue ?? [:]
        data["resend_attempts_left"] = .number(Double(left - 1))
        // The browser goes on with the token it holds, as after a poll: a resend whose answer is lost on the
        // way leaves it able to poll.
        return .stillWaiting(data: .object(data), secrets: secrets)
    }

    func cancel(_ state: inout InteractionState, _ environment: StepEnvironment) async throws {
        if let approvalID = environment.secrets[Key.approvalID] {
            try await environment.effects.cancelApproval(approvalID)
        }
    }

    private func select(_ input: JSONValue?, _ state: inout InteractionState, _ environment: StepEnvironment) async throws -> StepOutcome {
        let code = try ClientInput(input).string("selected_device_code")
        let codes = Dictionary(
            (environment.secrets[Key.deviceCodes] ?? "").split(separator: ",").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                return (parts[0], parts.count > 1 ? parts[1] : "")
            }, uniquingKeysWith: { first, _ in first })
        guard let deviceID = codes[code] else {
            return .stay(data: state.current?.data, secrets: environment.secrets, error: WireError(
                code: ErrorCode.unknownDeviceCode, message: "No device has the code '\(code)'."))
        }
        guard let externalUserID = environment.secrets["user"],
            let (user, devices) = try await environment.effects.activeDevices(ofUser: externalUserID),
            let device = devices.first(where: { $0.id == deviceID })
        else {
            return .failure(WireError(code: ErrorCode.noRegisteredDevices, message: "The chosen device is no longer registered."))
        }
        switch try await startWaiting(on: .device(user, device), &state, environment) {
        case .present(_, let data, let secrets): return .stay(data: data, secrets: secrets, error: nil)
        case .outcome(let outcome): return outcome
        }
    }

    /// Creates the approval (or, for nobody, its decoy) and presents the waiting step; both look the same
    /// to the browser.
    private func startWaiting(
        on addressee: Addressee, _ state: inout InteractionState, _ environment: StepEnvironment
    ) async throws -> StepEntry {
        if case .device(_, let device) = addressee, !device.canReceivePush {
            return .outcome(.failure(WireError(
                code: ErrorCode.pushTokenInvalid,
                message: "The phone's push registration is no longer valid; open the app on the phone to register it again.")))
        }
        let approvalData: ApprovalData?
        switch environment.approvalData(state) {
        case .success(let data): approvalData = data
        case .failure(let error): return .outcome(.failure(error))
        }
        let displayOTP = environment[Self.displayWebOTP]
        let otp = displayOTP ? WebOTP.generate(length: environment[Self.otpLength]) : nil
        let expiresAt = environment.now.addingTimeInterval(TimeInterval(environment[Self.expiresIn]))
        let approvalID = switch addressee {
        case .device(let user, let device):
            try await environment.effects.createApproval(ApprovalRequest(
                user: user, deviceID: device.id, clientID: state.clientID, journeyID: state.journeyID,
                mobileJourneyID: environment[Self.mobileJourney], approvalData: approvalData,
                additionalData: environment[Self.additionalData], correlationID: state.correlationID, otp: otp,
                expiresAt: expiresAt, limits: Self.limits(environment)))
        case .nobody(let identifier, let userID):
            try await environment.effects.createDecoyApproval(DecoyApprovalRequest(
                identifier: identifier, userID: userID, clientID: state.clientID, expiresAt: expiresAt, limits: Self.limits(environment)))
        }
        let resends = environment[Self.resendAttempts]
        var data: [String: JSONValue] = [
            "polling_interval": .number(Double(environment[Self.pollingInterval])),
            "resend_attempts_left": .number(Double(resends)),
            "expires_at": .string(expiresAt.formatted(.iso8601)),
            "push_status": "queued",
        ]
        if let otp { data["otp"] = .string(otp) }
        if let approvalData { data["approval_data"] = approvalData.json }
        let secrets = [
            Key.mode: "waiting", Key.approvalID: approvalID, Key.resendsLeft: String(resends),
            Key.lastPoll: String(environment.now.timeIntervalSince1970), Key.lastPush: String(environment.now.timeIntervalSince1970),
        ]
        return .present(journeyStepID: JourneyStepID.mobileApproveAuthentication, data: .object(data), secrets: secrets)
    }

    /// Whole seconds, rounded up, until `interval` seconds have passed since the time kept under `key`; nil
    /// once they have.
    private static func secondsToWait(since key: String, interval: Int, _ environment: StepEnvironment) -> Int? {
        guard let last = environment.secrets[key].flatMap(TimeInterval.init) else { return nil }
        let wait = last + TimeInterval(interval) - environment.now.timeIntervalSince1970
        return wait > 0 ? Int(wait.rounded(.up)) : nil
    }

    /// The step's push-fatigue limits.
    static func limits(_ environment: StepEnvironment) -> ApprovalLimits {
        ApprovalLimits(
            onePendingPerUser: environment[onePendingPerUser],
            firstBackoff: TimeInterval(environment[backoffSeconds]),
            longestBackoff: TimeInterval(environment[backoffMaxSeconds]),
            notMeBlock: TimeInterval(environment[notMeBlockSeconds]),
            ringsPerHour: environment[ringsPerHour])
    }
}
