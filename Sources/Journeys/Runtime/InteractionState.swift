import CountersignCore
import Foundation

/// Everything a journey run remembers between two client calls. The server stores it as one JSON
/// document per interaction, so it must hold only what the next step needs.
public struct InteractionState: Codable, Sendable {
    public var journeyID: String
    public var clientID: String
    /// `additional_params` of the start call: `@policy.request().params`.
    public var requestParams: [String: JSONValue]
    /// `approval_data` of the start call, when given (already checked against the rules).
    public var approvalData: ApprovalData?
    public var correlationID: String?
    /// What the web request that started a mobile approve journey passed on.
    public var mobileApproveParameters: [String: JSONValue]
    /// Outputs of finished steps, by step id.
    public var variables: [String: JSONValue]
    /// The person the journey has identified, once it has.
    public var user: UserContext?
    /// True while `user` is only someone the client named (`create_user` found an existing user by an
    /// identifier it was given): nothing proved the client is that person, so registration steps will not
    /// bind keys to them. Nil once the user is proven or was created by this run.
    public var userOnlyNamed: Bool?
    /// Authentication methods proven so far, in order.
    public var amr: [String]
    public var authTime: Date?
    /// Approval data a transaction signature covered in this run; tokens carry it.
    public var signedApprovalData: ApprovalData?
    /// A backend client's request a signature covered in this run: canonical JSON of its details and
    /// binding message (`AuthorizationRequestChallenge`).
    public var signedAuthorizationRequest: String?
    /// The device registered or used by this run.
    public var deviceID: String?
    /// Biometric keys this run registered, stored only when it completes (`complete`): a registration
    /// that fails or is left halfway leaves no key behind. Nil when there are none.
    public var biometricKeysToStore: [BiometricKeyRegistration]?
    /// The step waiting for the client; nil once the journey has ended.
    public var current: CurrentStep?
    /// For a mobile approve journey: the approval it settles when it ends.
    public var approvalID: String?
    /// For a mobile approve journey: the person cancelled with "this wasn't me".
    public var reportedNotMine: Bool?
    /// For a web journey: the user who approved its request on their phone, whose browser its success
    /// remembers (`rememberBrowser`) if it ends as that user. Nil until then.
    public var approvedOnPhoneBy: String?
    /// Wrong credentials given so far, by step id, over the whole run: a step entered again (its `failure`
    /// edge, `cancel` or a branch leading back to it) goes on counting, and one whose tries are used up is
    /// not entered again. Nil while there are none.
    public var failedAttemptsByStep: [String: Int]?

    public init(
        journeyID: String, clientID: String, requestParams: [String: JSONValue] = [:],
        approvalData: ApprovalData? = nil, correlationID: String? = nil,
        mobileApproveParameters: [String: JSONValue] = [:]
    ) {
        self.journeyID = journeyID
        self.clientID = clientID
        self.requestParams = requestParams
        self.approvalData = approvalData
        self.correlationID = correlationID
        self.mobileApproveParameters = mobileApproveParameters
        self.variables = [:]
        self.user = nil
        self.amr = []
        self.authTime = nil
        self.deviceID = nil
        self.current = nil
        self.approvalID = nil
    }

    /// Whether the journey has reached success or rejection.
    public var isFinished: Bool { current == nil }

    var expressionContext: ExpressionContext {
        ExpressionContext(
            requestParams: requestParams, userContext: user?.json ?? [:],
            mobileApproveParameters: mobileApproveParameters, variables: variables)
    }

    /// Acts for `user` from now on; `proven` is false when the client only named them.
    public mutating func actFor(_ user: UserContext, proven: Bool = true) {
        self.user = user
        userOnlyNamed = proven ? nil : true
    }

    /// Wrong credentials given to step `stepID` so far in this run (for a state written by the release
    /// before, which counted on the current step only, that count).
    func failedAttempts(at stepID: String) -> Int {
        if let counted = failedAttemptsByStep?[stepID] { return counted }
        return current?.stepID == stepID ? current?.failedAttempts ?? 0 : 0
    }

    /// Counts one more wrong credential at step `stepID`; returns how many it has had.
    mutating func countFailedAttempt(at stepID: String) -> Int {
        let attempts = failedAttempts(at: stepID) + 1
        var counts = failedAttemptsByStep ?? [:]
        counts[stepID] = attempts
        failedAttemptsByStep = counts
        return attempts
    }

    /// Records a proven method (once) and when it was proven.
    public mutating func addAuthenticationMethod(_ method: String, at time: Date) {
        if !amr.contains(method) { amr.append(method) }
        authTime = time
    }
}

/// The step a run is waiting on.
public struct CurrentStep: Codable, Sendable {
    public var stepID: String
    public var journeyStepID: String
    public var data: JSONValue?
    /// Values the client must not see, such as the challenge it has to sign.
    public var secrets: [String: String]
    /// Wrong credentials given to this step so far in the run. `InteractionState.failedAttemptsByStep` is
    /// what counts; this copy is written for instances of the release before it, which read tries here
    /// while both serve during an upgrade, and read from a state such an instance wrote.
    public var failedAttempts: Int
}

/// The user a journey is acting for; `@policy.userContext()` reads it.
public struct UserContext: Codable, Sendable, Equatable {
    public var userID: String
    public var externalUserID: String
    public var email: String?

    public init(userID: String, externalUserID: String, email: String?) {
        self.userID = userID
        self.externalUserID = externalUserID
        self.email = email
    }

    var json: [String: JSONValue] {
        var members: [String: JSONValue] = ["user_id": .string(userID), "external_user_id": .string(externalUserID)]
        if let email { members["email"] = .string(email) }
        return members
    }
}
