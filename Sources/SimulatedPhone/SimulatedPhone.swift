import CountersignClient
import CountersignCore
import Foundation

/// A phone built on the Swift SDK with software keys, answering approvals the way the templates ask:
/// `countersign device` and `countersign-bench` use it.
public struct SimulatedPhone: Sendable {
    public let profile: DeviceProfile
    public let client: OrchestrationClient
    public let authenticator: Authenticator

    public init(profile: DeviceProfile, directory: URL, transport: any HTTPTransport = URLSessionTransport()) throws {
        self.profile = profile
        client = OrchestrationClient(baseURL: try Self.serverURL(profile.server), clientID: profile.clientID, transport: transport)
        authenticator = Authenticator(keyStore: CachedKeyStore(SoftwareKeyStore(url: DeviceProfile.keysFile(in: directory))))
    }

    /// `server` as the base URL of a server: http or https, with a host.
    public static func serverURL(_ server: String) throws -> URL {
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host?.isEmpty == false else {
            throw SimulatedPhoneError.refused("'\(server)' is not a server URL, such as http://127.0.0.1:8080.")
        }
        return url
    }

    /// How the phone shows whom it registers for.
    public enum Enrollment: Sendable {
        /// The one-time code the relying party issued for its user: `mobile_registration`.
        case code(String)
        /// Only an email, trusted as given: `mobile_registration_by_email`, on development servers only.
        case email(String)
    }

    /// Registers the phone and stores its profile in `directory`; its pushes come through `push` (the
    /// inbox unless told).
    public static func register(
        server: String, clientID: String, enrollment: Enrollment, name: String, directory: URL,
        push: PushRegistration = PushRegistration(channel: "inbox", token: nil, appID: nil), transport: any HTTPTransport = URLSessionTransport()
    ) async throws -> DeviceProfile {
        let client = OrchestrationClient(baseURL: try serverURL(server), clientID: clientID, transport: transport)
        await client.setPushToken(push.token, channel: push.channel, appID: push.appID)
        let authenticator = Authenticator(keyStore: SoftwareKeyStore(url: DeviceProfile.keysFile(in: directory)))
        var step: IdoResponse
        switch enrollment {
        case .code(let code):
            step = try await client.startJourney("mobile_registration")
            guard step.journeyStepID == JourneyStepID.enrollmentCode else { throw SimulatedPhoneError.refused(Self.describe(step)) }
            step = try await client.submitClientResponse(.clientInput, data: ["enrollment_code": .string(code)])
        case .email(let email):
            step = try await client.startJourney("mobile_registration_by_email")
            step = try await client.submitClientResponse(.clientInput, data: ["email": .string(email)])
        }
        guard step.journeyStepID == JourneyStepID.mobileBiometricsRegistration, let user = step.data?["user_identifier"]?.stringValue else {
            throw SimulatedPhoneError.refused(Self.describe(step))
        }
        let deviceID: String
        do {
            step = try await client.submitClientResponse(.clientInput, data: try await authenticator.registerNativeBiometrics(userIdentifier: user))
            guard step.journeyStepID == JourneyStepID.deviceRegistration, let challenge = step.data?["challenge"]?.stringValue else {
                throw SimulatedPhoneError.refused(Self.describe(step))
            }
            step = try await client.submitClientResponse(.clientInput, data: try await authenticator.registerDevice(
                challenge: challenge, name: name, model: "countersign device", push: await client.pushRegistration))
            guard step.journeyStepID == JourneyStepID.success, let registered = step.data?["device_id"]?.stringValue else {
                throw SimulatedPhoneError.refused(Self.describe(step))
            }
            deviceID = registered
        } catch {
            // The registration failed: the keys it made are never kept, so none is left in the key file.
            try? await authenticator.discardRegisteredKeys(userIdentifier: user)
            throw error
        }
        try await authenticator.keepRegisteredKeys(userIdentifier: user)
        let profile = DeviceProfile(server: server, clientID: clientID, deviceID: deviceID, userIdentifier: user)
        try profile.save(to: directory)
        return profile
    }

    /// The push payloads waiting for this phone.
    public func pending(wait: Int = 0) async throws -> [[String: String]] {
        try await client.pendingApprovals(deviceID: profile.deviceID, authenticator: authenticator, wait: wait)
    }

    /// Starts the approval's mobile journey; the caller decides, then calls `approve` or `deny`.
    public func open(_ payload: [String: String]) async throws -> IdoResponse {
        try await client.startMobileApproveJourney(payload: payload, deviceID: profile.deviceID, authenticator: authenticator)
    }

    /// Answers the opened journey's steps: the web code when asked, then biometrics. Transaction details
    /// go to `show` before they are signed.
    public func approve(from opened: IdoResponse, otp: String?, show: (String) -> Void = { _ in }) async throws -> IdoResponse {
        var step = opened
        while true {
            switch step.journeyStepID {
            case JourneyStepID.otpValidation:
                // Without the code the request stays pending, so a later `approve --otp` can answer it.
                guard let otp else { throw SimulatedPhoneError.otpRequired }
                step = try await client.submitClientResponse(.clientInput, data: ["passcode": .string(otp)])
                if step.error != nil { throw SimulatedPhoneError.refused(Self.describe(step)) }
            case JourneyStepID.mobileBiometricsAuthentication:
                guard let challenge = step.data?["biometrics_challenge"]?.stringValue else { throw SimulatedPhoneError.refused(Self.describe(step)) }
                step = try await client.submitClientResponse(
                    .clientInput, data: try await authenticator.authenticateNativeBiometrics(userIdentifier: profile.userIdentifier, challenge: challenge))
            case JourneyStepID.mobileBiometricsTransactionSigning where step.data?["authorization_details"] != nil:
                guard let data = step.data, let details = data["authorization_details"]?.arrayValue,
                    let bindingMessage = data["binding_message"]?.stringValue, let nonce = data["nonce"]?.stringValue,
                    let challenge = data["biometrics_challenge"]?.stringValue
                else { throw SimulatedPhoneError.refused(Self.describe(step)) }
                Self.requestLines(details, bindingMessage: bindingMessage).forEach(show)
                step = try await client.submitClientResponse(.clientInput, data: try await authenticator.authorizationRequestNativeBiometrics(
                    userIdentifier: profile.userIdentifier, authorizationDetails: details, bindingMessage: bindingMessage, nonce: nonce,
                    challenge: challenge))
            case JourneyStepID.mobileBiometricsTransactionSigning:
                guard let data = step.data, let details = data["approval_data"]?.objectValue,
                    let nonce = data["nonce"]?.stringValue, let challenge = data["biometrics_challenge"]?.stringValue
                else { throw SimulatedPhoneError.refused(Self.describe(step)) }
                let approvalData = details.compactMapValues(\.stringValue)
                Self.detailLines(approvalData).forEach(show)
                step = try await client.submitClientResponse(.clientInput, data: try await authenticator.approvalNativeBiometrics(
                    userIdentifier: profile.userIdentifier, approvalData: approvalData, nonce: nonce, challenge: challenge))
            case JourneyStepID.success:
                return step
            default:
                throw SimulatedPhoneError.refused(Self.describe(step))
            }
        }
    }

    /// The waiting request named `approvalID`; without a name, the only one waiting. Several waiting and
    /// none named is refused: answering "the oldest" could answer someone else's request.
    public func request(named approvalID: String?) async throws -> [String: String] {
        let pending = try await pending()
        if let approvalID {
            guard let payload = pending.first(where: { $0["approval_id"] == approvalID }) else { throw SimulatedPhoneError.nothingPending }
            return payload
        }
        guard let only = pending.first else { throw SimulatedPhoneError.nothingPending }
        guard pending.count == 1 else { throw SimulatedPhoneError.severalPending(pending.compactMap { $0["approval_id"] }) }
        return only
    }

    /// Denies the opened journey; `notMine` reports the request as not the person's own ("this wasn't me").
    public func deny(notMine: Bool = false) async throws -> IdoResponse {
        try await client.submitClientResponse(.cancel, data: notMine ? ["reason": .string(DenialReason.notMine)] : nil)
    }

    /// A line a person can read about a response that is not what was expected.
    public static func describe(_ step: IdoResponse) -> String {
        if let error = step.error { return "\(error.code): \(error.message)" }
        return "unexpected step \(step.journeyStepID)"
    }

    /// Transaction details as a person reads them, one `key: value` per line.
    public static func detailLines(_ approvalData: [String: String]) -> [String] {
        approvalData.sorted { $0.key < $1.key }.map { "  \($0.key): \($0.value)" }
    }

    /// A backend client's request as the person reads it: its binding message, then each authorization
    /// detail's values by path (`  [0] instructedAmount.amount: 123.50`).
    public static func requestLines(_ details: [JSONValue], bindingMessage: String) -> [String] {
        var lines = ["  binding message: \(bindingMessage.isEmpty ? "(none)" : bindingMessage)"]
        func walk(_ value: JSONValue, _ path: String) {
            switch value {
            case .object(let members): for (key, member) in members.sorted(by: { $0.key < $1.key }) { walk(member, path.isEmpty ? key : "\(path).\(key)") }
            case .array(let elements): for (index, element) in elements.enumerated() { walk(element, "\(path)[\(index)]") }
            case .string(let text): lines.append("  \(path): \(text)")
            default: lines.append("  \(path): \(CanonicalJSON.text(value))")
            }
        }
        for (index, detail) in details.enumerated() { walk(detail, "[\(index)]") }
        return lines
    }

    /// Where the request came from, as a person reads it: "Firefox 128 on Linux, 192.0.2.7, at …".
    public static func origin(of step: IdoResponse) -> String? {
        guard let context = step.data?["request_context"]?.objectValue else { return nil }
        func field(_ name: String) -> String { context[name]?.stringValue ?? "unknown" }
        return "\(field("browser")) on \(field("os")), \(field("client_ip")), at \(field("requested_at"))"
    }

    /// A line about a pending request: application and expiry.
    public static func summary(_ payload: [String: String]) -> String {
        "\(payload["application"] ?? "An application") asks for approval (request \(payload["approval_id"] ?? "?"), expires \(payload["expires_at"] ?? "?"))"
    }
}
