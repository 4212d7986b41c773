/// The one response shape every client receives from the orchestration API (DESIGN.md §2).
public struct IdoResponse: Codable, Sendable, Equatable {
    /// The opaque id of the journey run.
    public var interactionID: String
    /// Bearer secret for the next submit; a new one comes with every response that moves the run.
    public var interactionToken: String?
    public var journeyID: String
    /// Which step the client has to answer, e.g. `mobile_biometrics_authentication` or `action:success`.
    public var journeyStepID: String
    public var data: JSONValue?
    /// The answers the current step accepts, keyed by option id.
    public var clientResponseOptions: [String: ClientResponseOption]?
    /// The signed token, on `action:success` only.
    public var token: String?
    /// Why the last submit failed, when it did.
    public var error: WireError?

    public init(
        interactionID: String, interactionToken: String?, journeyID: String, journeyStepID: String,
        data: JSONValue? = nil, clientResponseOptions: [String: ClientResponseOption]? = nil,
        token: String? = nil, error: WireError? = nil
    ) {
        self.interactionID = interactionID
        self.interactionToken = interactionToken
        self.journeyID = journeyID
        self.journeyStepID = journeyStepID
        self.data = data
        self.clientResponseOptions = clientResponseOptions
        self.token = token
        self.error = error
    }

    enum CodingKeys: String, CodingKey {
        case interactionID = "interaction_id"
        case interactionToken = "interaction_token"
        case journeyID = "journey_id"
        case journeyStepID = "journey_step_id"
        case data
        case clientResponseOptions = "client_response_options"
        case token
        case error
    }
}

/// One answer a step accepts.
public struct ClientResponseOption: Codable, Sendable, Equatable {
    public var type: ClientResponseOptionType
    public var id: String
    public var label: String

    public init(type: ClientResponseOptionType, id: String, label: String) {
        self.type = type
        self.id = id
        self.label = label
    }

    public static let clientInput = ClientResponseOption(type: .clientInput, id: "client_input", label: "Continue")
    public static let cancel = ClientResponseOption(type: .cancel, id: "cancel", label: "Cancel")
    public static let failure = ClientResponseOption(type: .failure, id: "failure", label: "Failure")
}

/// The kinds of answer a client can give to a step.
public enum ClientResponseOptionType: String, Codable, Sendable, CaseIterable {
    case clientInput = "client_input"
    case cancel
    case failure
    case custom
    case resend
}

/// The wire `error` object.
public struct WireError: Codable, Sendable, Equatable, Error {
    public var code: String
    public var message: String
    public var data: JSONValue?

    public init(code: String, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }
}

/// The body of `POST /v1/interactions/{id}/submit`.
public struct ClientResponse: Codable, Sendable {
    /// `client_input`, `cancel`, `failure`, `resend`, or a custom branch id.
    public var option: String
    public var data: JSONValue?

    public init(option: String, data: JSONValue? = nil) {
        self.option = option
        self.data = data
    }
}

/// The body of `POST /v1/journeys/{journey_id}/start`.
public struct StartJourneyRequest: Codable, Sendable {
    public var clientID: String
    public var additionalParams: [String: JSONValue]?
    /// Any JSON, so that the server can name what is wrong with it (`invalid_approval_data`).
    public var approvalData: JSONValue?
    public var correlationID: String?

    public init(
        clientID: String, additionalParams: [String: JSONValue]? = nil,
        approvalData: JSONValue? = nil, correlationID: String? = nil
    ) {
        self.clientID = clientID
        self.additionalParams = additionalParams
        self.approvalData = approvalData
        self.correlationID = correlationID
    }

    enum CodingKeys: String, CodingKey {
        case clientID = "client_id"
        case additionalParams = "additional_params"
        case approvalData = "approval_data"
        case correlationID = "correlation_id"
    }
}
