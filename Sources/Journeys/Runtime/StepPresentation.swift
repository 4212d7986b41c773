import CountersignCore

/// What the client sees after a call: the step to answer (or the journey's end), its data and options.
public struct StepPresentation: Sendable {
    public var journeyStepID: String
    public var data: JSONValue?
    public var options: [String: ClientResponseOption]
    /// The signed token, on success.
    public var token: String?
    /// Why the last answer was refused (the step is shown again), or why the journey was rejected.
    public var error: WireError?
    /// Whether the journey has ended (success or rejection).
    public var isFinal: Bool
    /// Whether the call only looked at a step that is still waiting (a poll): the client keeps its
    /// interaction token, so that a poll whose answer was lost on the way can be sent again. Every other
    /// call that leaves the run going hands out a fresh one.
    public var keepsToken = false

    /// Whether the client's last answer was refused and the step is repeated: HTTP 400.
    public var isRepeatedAfterError: Bool { error != nil && !isFinal }

    static func success(data: JSONValue?, token: String?) -> StepPresentation {
        StepPresentation(journeyStepID: JourneyStepID.success, data: data, options: [:], token: token, error: nil, isFinal: true)
    }

    static func rejection(_ error: WireError, data: JSONValue? = nil) -> StepPresentation {
        StepPresentation(journeyStepID: JourneyStepID.rejection, data: data, options: [:], token: nil, error: error, isFinal: true)
    }
}

/// A client answer that is malformed or not offered. The run is left exactly as it was: HTTP 400
/// `client_response_not_valid`.
public struct ClientResponseNotValid: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
