import CountersignCore

/// Why an SDK call failed.
public enum CountersignClientError: Error, Equatable, CustomStringConvertible {
    /// The server refused the call; `error.code` is the stable wire code.
    case server(status: Int, error: WireError)
    /// The server answered something that is not the protocol.
    case unexpectedResponse(status: Int)
    /// `submitClientResponse` was called before `startJourney`, or after the journey ended.
    case noActiveInteraction
    /// The transaction challenge the server sent does not match the data shown: refuse to sign.
    case challengeMismatch
    /// A sign-in step sent a challenge that is not a sign-in's (it could be a transaction's): refuse to sign.
    case notAnAuthenticationChallenge
    /// The key the step needs is not in the key store.
    case keyNotFound(alias: String)
    /// `keepRegisteredKeys` found no key this authenticator's registration calls made for the user.
    case noRegisteredKeys

    public var description: String {
        switch self {
        case .server(let status, let error): "server refused (\(status)): \(error.code): \(error.message)"
        case .unexpectedResponse(let status): "unexpected response (HTTP \(status))"
        case .noActiveInteraction: "no journey is in progress"
        case .challengeMismatch: "the challenge does not match the approval data shown"
        case .notAnAuthenticationChallenge: "the sign-in challenge is not one: it could be a transaction's, which is never signed unseen"
        case .keyNotFound(let alias): "no key '\(alias)' in the key store"
        case .noRegisteredKeys: "no registration of this authenticator made keys for that user"
        }
    }
}
