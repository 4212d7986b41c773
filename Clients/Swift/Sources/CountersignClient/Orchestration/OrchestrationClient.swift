import CountersignCore
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs journeys against a Countersign server: start one, then answer each step.
///
/// ```swift
/// let client = OrchestrationClient(baseURL: URL(string: "https://auth.example.com")!, clientID: "demo-native")
/// var step = try await client.startJourney("mobile_login")
/// step = try await client.submitClientResponse(.clientInput, data: answer)
/// if step.journeyStepID == JourneyStepID.success { use(step.token) }
/// ```
///
/// The client keeps the interaction id and the rotating interaction token between calls. A refused
/// answer that repeats the step (e.g. `invalid_credentials`) is returned with `error` set; any other
/// refusal throws `CountersignClientError.server`.
public actor OrchestrationClient {
    public let baseURL: URL
    public let clientID: String
    private let transport: any HTTPTransport
    private var interactionID: String?
    private var interactionToken: String?
    /// The browser credential a web journey's success handed this client (`data.browser_credential`), sent
    /// with its later calls, as the browser SDK does: kept in memory only, for clients acting as a browser.
    public private(set) var browserCredential: String?
    /// The push registration `setPushToken` recorded, sent with device registration.
    public private(set) var pushRegistration: PushRegistration = PushRegistration(channel: "inbox", token: nil, appID: nil)

    public init(baseURL: URL, clientID: String, transport: any HTTPTransport = URLSessionTransport()) {
        self.baseURL = baseURL
        self.clientID = clientID
        self.transport = transport
    }

    /// Starts `journeyID`; `additionalParams` become `@policy.request().params`.
    public func startJourney(
        _ journeyID: String, additionalParams: [String: JSONValue]? = nil, approvalData: [String: String]? = nil,
        correlationID: String? = nil
    ) async throws -> IdoResponse {
        let body = StartJourneyRequest(
            clientID: clientID, additionalParams: additionalParams, approvalData: approvalData.map { .object($0.mapValues { .string($0) }) },
            correlationID: correlationID)
        let response = try await post(["v1", "journeys", journeyID, "start"], body: body, bearer: nil)
        return remember(response)
    }

    /// Answers the current step with one of its options.
    public func submitClientResponse(_ option: ClientResponseOptionType, data: JSONValue? = nil) async throws -> IdoResponse {
        try await submitClientResponse(option: option.rawValue, data: data)
    }

    /// Answers the current step with an option id, including custom branch ids.
    public func submitClientResponse(option: String, data: JSONValue? = nil) async throws -> IdoResponse {
        guard let interactionID, let interactionToken else { throw CountersignClientError.noActiveInteraction }
        let response = try await post(
            ["v1", "interactions", interactionID, "submit"], body: ClientResponse(option: option, data: data), bearer: interactionToken)
        return remember(response)
    }

    /// Starts the mobile approve journey of a push payload, proving with the device key that this is the
    /// device the approval was sent to. The payload is passed exactly as received.
    public func startMobileApproveJourney(
        payload: [String: String], deviceID: String, authenticator: Authenticator, now: Date = Date()
    ) async throws -> IdoResponse {
        guard let approvalID = payload["approval_id"] else { throw CountersignClientError.unexpectedResponse(status: 0) }
        let timestamp = Int(now.timeIntervalSince1970)
        let signature = try await authenticator.signWithDeviceKey(DeviceProof.approveMessage(approvalID: approvalID, timestamp: timestamp))
        let body = MobileApproveStartRequest(
            clientID: payload["client_id"] ?? clientID, payload: payload, deviceID: deviceID, timestamp: timestamp,
            deviceSignature: signature)
        return remember(try await post(["v1", "mobile-approve", "start"], body: body, bearer: nil))
    }

    /// The inbox channel: push payloads waiting for this device, holding the request up to `wait`
    /// seconds (at most 30) until one arrives. The request is signed with the device key, over its path
    /// from the server's root (the base URL's own path, a balancer's prefix, is not the server's).
    public func pendingApprovals(deviceID: String, authenticator: Authenticator, wait: Int = 0, now: Date = Date()) async throws -> [[String: String]] {
        var relative = URLComponents()
        relative.path = "/v1/devices/\(deviceID)/pending"
        if wait > 0 { relative.queryItems = [URLQueryItem(name: "wait", value: String(wait))] }
        let base = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        guard let path = relative.string, let requestURL = URL(string: base + path) else {
            throw CountersignClientError.unexpectedResponse(status: 0)
        }
        let timestamp = Int(now.timeIntervalSince1970)
        let signature = try await authenticator.signWithDeviceKey(
            DeviceProof.requestMessage(method: "GET", pathWithQuery: path, timestamp: timestamp))
        var request = URLRequest(url: requestURL)
        request.httpMethod = "GET"
        request.timeoutInterval = TimeInterval(wait + 30)
        request.setValue(deviceID, forHTTPHeaderField: "Countersign-Device")
        request.setValue(String(timestamp), forHTTPHeaderField: "Countersign-Timestamp")
        request.setValue(signature, forHTTPHeaderField: "Countersign-Signature")
        let (data, http) = try await transport.send(request)
        if let inbox = try? JSONDecoder().decode(Inbox.self, from: data) { return inbox.approvals }
        throw Self.refusal(data, status: http.statusCode)
    }

    /// Records how the server reaches this phone; sent when the device registers.
    public func setPushToken(_ token: String?, channel: String = "apns", appID: String? = nil) {
        pushRegistration = PushRegistration(channel: channel, token: token, appID: appID)
    }

    private func remember(_ response: IdoResponse) -> IdoResponse {
        interactionID = response.interactionID
        interactionToken = response.interactionToken
        if let credential = response.data?["browser_credential"]?.stringValue { browserCredential = credential }
        return response
    }

    private func post(_ path: [String], body: some Encodable, bearer: String?) async throws -> IdoResponse {
        var url = baseURL
        for component in path { url.appendPathComponent(component) }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let browserCredential { request.setValue(browserCredential, forHTTPHeaderField: "Countersign-Browser-Credential") }
        request.httpBody = try JSONEncoder().encode(body)
        let (data, http) = try await transport.send(request)
        if let response = try? JSONDecoder().decode(IdoResponse.self, from: data) {
            return response
        }
        throw Self.refusal(data, status: http.statusCode)
    }

    private static func refusal(_ data: Data, status: Int) -> CountersignClientError {
        if let envelope = try? JSONDecoder().decode(ErrorEnvelope.self, from: data) {
            return .server(status: status, error: envelope.error)
        }
        return .unexpectedResponse(status: status)
    }

    private struct ErrorEnvelope: Decodable {
        let error: WireError
    }

    private struct Inbox: Decodable {
        let approvals: [[String: String]]
    }
}

/// How the server reaches a phone: `apns`, `fcm` or `inbox`, with the provider's token and app id.
public struct PushRegistration: Sendable, Equatable {
    public var channel: String
    public var token: String?
    public var appID: String?

    public init(channel: String, token: String?, appID: String?) {
        self.channel = channel
        self.token = token
        self.appID = appID
    }

    var json: JSONValue {
        var members: [String: JSONValue] = ["channel": .string(channel)]
        if let token { members["token"] = .string(token) }
        if let appID { members["app_id"] = .string(appID) }
        return .object(members)
    }
}
