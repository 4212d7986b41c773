import CountersignCore
import Foundation

/// The parameters of a backchannel authentication request (DESIGN.md §7), from the form or from a signed
/// request object, each checked: what the approval is made of.
struct BackchannelRequest: Sendable {
    let scope: String
    /// The user's external id (`login_hint`), or the subject of an id token this server issued to the
    /// client (`id_token_hint`).
    let hint: UserHint
    let bindingMessage: String?
    /// Seconds the client asked the request to live for, when it did.
    let requestedExpiry: Int?
    let clientNotificationToken: String?
    let authorizationDetails: [JSONValue]

    enum UserHint: Sendable {
        case externalUserID(String)
        case idToken(String)
    }

    static let longestBindingMessage = 64
    static let longestNotificationToken = 1024

    /// The request in `parameters` (form fields as strings; a request object's claims as JSON values), for
    /// `client`.
    init(_ parameters: [String: JSONValue], client: AuthenticatedClient, types: AuthorizationDetailTypes) throws(OAuthError) {
        func text(_ name: String) throws(OAuthError) -> String? {
            guard let value = parameters[name], value != .null else { return nil }
            guard let text = value.stringValue else { throw .invalidRequest("'\(name)' must be a string.") }
            return text.isEmpty ? nil : text
        }
        // The phone signs the details, not the scopes: a scope it never showed must grant nothing, so
        // `openid` is the only one.
        guard let scope = try text("scope"), Set(scope.split(separator: " ")) == ["openid"] else {
            throw OAuthError(status: .badRequest, code: "invalid_scope", description: "'scope' must be openid (the details say what is granted).")
        }
        self.scope = "openid"
        if try text("login_hint_token") != nil { throw .invalidRequest("'login_hint_token' is not supported: send login_hint or id_token_hint.") }
        switch (try text("login_hint"), try text("id_token_hint")) {
        case (let login?, nil):
            guard login.count <= 255, PrintableText.problem(in: login) == nil else { throw .invalidRequest("'login_hint' names no user.") }
            hint = .externalUserID(login)
        case (nil, let token?):
            hint = .idToken(token)
        default:
            throw .invalidRequest("Send exactly one of login_hint and id_token_hint.")
        }
        if let message = try text("binding_message") {
            if let problem = PrintableText.problem(in: message) {
                throw OAuthError(status: .badRequest, code: "invalid_binding_message", description: "'binding_message' \(problem).")
            }
            guard message.unicodeScalars.count <= Self.longestBindingMessage else {
                throw OAuthError(
                    status: .badRequest, code: "invalid_binding_message",
                    description: "'binding_message' must be at most \(Self.longestBindingMessage) characters.")
            }
            bindingMessage = message
        } else {
            bindingMessage = nil
        }
        switch parameters["requested_expiry"] {
        case nil, .null?: requestedExpiry = nil
        case .number(let seconds)?:
            guard seconds.rounded() == seconds, seconds >= 1, seconds <= 86400 else { throw Self.badExpiry }
            requestedExpiry = Int(seconds)
        case .string(let text)?:
            guard let seconds = Int(text), (1...86400).contains(seconds) else { throw Self.badExpiry }
            requestedExpiry = seconds
        default: throw Self.badExpiry
        }
        let token = try text("client_notification_token")
        if client.backend.tokenDeliveryMode == TokenDeliveryMode.ping.rawValue {
            guard let token else { throw .invalidRequest("A ping client must send 'client_notification_token'.") }
            // RFC 6750's b64token: what a Bearer header can carry.
            guard token.count <= Self.longestNotificationToken,
                token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._~+/=".contains($0)) })
            else { throw .invalidRequest("'client_notification_token' must be at most 1024 characters a Bearer header can carry.") }
        }
        clientNotificationToken = client.backend.tokenDeliveryMode == TokenDeliveryMode.ping.rawValue ? token : nil
        let allowed = Set((try? JSONDecoder.wire.decode([String].self, from: Data(client.backend.authorizationDetailsTypes.utf8))) ?? [])
        switch parameters["authorization_details"] {
        case nil, .null?: authorizationDetails = []
        // In a form, a JSON array as text; in a request object, the array itself.
        case .string(let json)?: authorizationDetails = try AuthorizationDetails.parse(json, allowedTypes: allowed, types: types)
        case let array?: authorizationDetails = try AuthorizationDetails.check(array, allowedTypes: allowed, types: types)
        }
    }

    private static let badExpiry = OAuthError.invalidRequest("'requested_expiry' must be a whole number of seconds from 1 to 86400.")

    /// What the phone shows and signs (`AuthorizationRequestChallenge`).
    var signedObject: JSONValue {
        AuthorizationRequestChallenge.signedObject(authorizationDetails: authorizationDetails, bindingMessage: bindingMessage)
    }
}
