import CountersignCore
import Foundation
import HTTPTypes
import JWTKit
import Journeys
import Logging

/// OpenID CIBA over the approval engine (DESIGN.md §7): a backend client's request becomes an approval
/// pushed to the user's newest phone, under the same limits as a browser's; the client redeems the
/// answer at the token endpoint once.
struct CIBAService: Sendable {
    let storage: Storage
    let authentication: ClientAuthentication
    let approvals: ApprovalLifecycle
    let tokenIssuer: TokenIssuer
    /// Seals a ping request's notification token and `auth_req_id`, which the notifier must send back.
    let secrets: SecretBox
    let clock: any WallClock
    let issuer: String
    let metrics: ServerMetrics
    let detailTypes: AuthorizationDetailTypes
    /// The loaded journeys, which must hold the phone's CIBA journeys.
    let journeys: JourneyRegistry

    static let backchannelPath = "/oauth2/bc-authorize"
    static let tokenPath = "/oauth2/token"
    static let grantType = "urn:openid:params:grant-type:ciba"
    /// The journeys the phone runs to show and sign a request: a sign-in, and a request with details.
    static let signInJourneyID = "mobile_approve_ciba"
    static let transactionJourneyID = "mobile_approve_ciba_transaction"
    /// How long a request lives unless the client asks for less.
    static let defaultExpiry = 300
    /// Seconds between polls, raised by 5 at each `slow_down`.
    static let pollInterval = 5
    static let slowDownStep = 5

    /// The answer to a backchannel authentication request.
    struct Accepted: Encodable {
        let authReqID: String
        let expiresIn: Int
        let interval: Int

        enum CodingKeys: String, CodingKey {
            case authReqID = "auth_req_id"
            case expiresIn = "expires_in"
            case interval
        }
    }

    /// Makes the approval `form` asks for, on the user's newest phone.
    func authorize(_ form: [String: String], origin: RequestOrigin, logger: Logger) async throws -> Accepted {
        try await counted(endpoint: "backchannel", success: "accepted") { try await accept(form, origin: origin, logger: logger) }
    }

    /// Runs `call`, counting how it ended (`ServerMetrics.cibaRequest`).
    private func counted<Answer>(endpoint: String, success: String, _ call: () async throws -> Answer) async throws -> Answer {
        do {
            let answer = try await call()
            metrics.cibaRequest(endpoint: endpoint, outcome: success)
            return answer
        } catch let refusal as OAuthError {
            metrics.cibaRequest(endpoint: endpoint, outcome: refusal.code)
            throw refusal
        }
    }

    private func accept(_ form: [String: String], origin: RequestOrigin, logger: Logger) async throws -> Accepted {
        let client = try await authentication.authenticate(form, at: Self.backchannelPath, logger: logger)
        let request = try BackchannelRequest(try await parameters(of: form, from: client, logger: logger), client: client, types: detailTypes)
        let externalUserID = try await externalUserID(of: request.hint, client: client)
        guard let addressees = try await storage.devices.active(ofUser: externalUserID, inApplicationOfClient: client.client.id),
            let user = addressees.user
        else {
            throw OAuthError(status: .badRequest, code: "unknown_user_id", description: "No user of this application has that id.")
        }
        guard let device = addressees.devices.first(where: { $0.pushTokenInvalidAt == nil }) ?? addressees.devices.first else {
            throw Self.accessDenied("The user has no phone able to approve.")
        }
        let mobileJourneyID = request.authorizationDetails.isEmpty ? Self.signInJourneyID : Self.transactionJourneyID
        guard journeys[mobileJourneyID] != nil else {
            logger.error("a CIBA request has no journey for the phone", metadata: ["journey": "\(mobileJourneyID)"])
            throw OAuthError(
                status: .internalServerError, code: "server_error",
                description: "This server has no journey for the phone to approve the request with (\(mobileJourneyID)).")
        }
        let now = clock.now()
        let lifetime = min(request.requestedExpiry ?? Self.defaultExpiry, Self.defaultExpiry)
        let expiresAt = now.addingTimeInterval(TimeInterval(lifetime))
        let requestID = SecureRandom.identifier(prefix: CIBARequestRecord.idPrefix)
        let authReqID = SecureRandom.challenge()
        // The limits may refuse as the approval is made, or at the commit (a request for the same person at the
        // same moment): either way a policy refused it.
        do {
            let work = UnitOfWork()
            let approvalID = try await approvals.create(
                ApprovalRequest(
                    user: user.context, deviceID: device.id, clientID: client.client.id, journeyID: "ciba", mobileJourneyID: mobileJourneyID,
                    approvalData: nil, additionalData: nil, correlationID: nil, otp: nil, expiresAt: expiresAt, limits: .defaults),
                webInteractionID: requestID, origin: origin, device: device, application: addressees.application,
                authorizationRequest: CanonicalJSON.text(request.signedObject), in: work)
            await work.hold(storage.cibaRequests.insert(CIBARequestRecord(
                id: requestID, authReqHash: Self.hash(authReqID), clientID: client.client.id, userID: user.id, approvalID: approvalID,
                scope: request.scope, notificationToken: try request.clientNotificationToken.map { try secrets.seal($0, boundTo: requestID) },
                notificationAuthReqID: request.clientNotificationToken == nil ? nil : try secrets.seal(authReqID, boundTo: requestID),
                notifyDueAt: nil, notifyFirstAttemptAt: nil, notifiedAt: nil, pollInterval: Self.pollInterval,
                nextPollAt: now.addingTimeInterval(TimeInterval(Self.pollInterval)), expiresAt: expiresAt, createdAt: now, redeemedAt: nil)))
            try await work.commit(on: storage)
        } catch let refused as RecordedRefusal {
            try await refused.record()
            throw Self.accessDenied(refused.refusal.message)
        } catch let refused as ServiceError where refused.kind.status.code < 500 {
            // The application has no native client for the phone, or no longer exists.
            throw Self.accessDenied(refused.message)
        }
        return Accepted(authReqID: authReqID, expiresIn: lifetime, interval: Self.pollInterval)
    }

    /// The request's parameters: the form's, or the claims of its signed request object, which a client
    /// registered with a signing algorithm must send.
    private func parameters(of form: [String: String], from client: AuthenticatedClient, logger: Logger) async throws -> [String: JSONValue] {
        guard let requestObject = form["request"] else {
            if client.backend.requestSigningAlg != nil { throw OAuthError.invalidRequest("This client must send a signed 'request' object.") }
            return form.mapValues { .string($0) }
        }
        let outside = Set(form.keys).subtracting(["request", "client_assertion", "client_assertion_type", "client_id"])
        guard outside.isEmpty else {
            throw OAuthError.invalidRequest("With a 'request' object, every parameter goes inside it ('\(outside.sorted()[0].prefix(64))' is outside).")
        }
        return try await authentication.requestObjectClaims(requestObject, of: client, logger: logger)
    }

    /// The external id the hint names: `login_hint` as it is, or the subject of an id token this server
    /// issued to this client.
    private func externalUserID(of hint: BackchannelRequest.UserHint, client: AuthenticatedClient) async throws -> String {
        switch hint {
        case .externalUserID(let id):
            return id
        case .idToken(let token):
            guard let claims = try? await tokenIssuer.verifyIssued(token, as: IDTokenHintClaims.self), claims.iss == issuer,
                claims.clientID == nil,
                claims.aud == client.client.id, let user = try await storage.users.find(claims.sub)
            else {
                throw OAuthError(status: .badRequest, code: "unknown_user_id", description: "'id_token_hint' is no id token issued to this client.")
            }
            return user.externalUserID
        }
    }

    /// The tokens of a redeemed request.
    struct Tokens: Encodable {
        let accessToken: String
        let tokenType = "Bearer"
        let expiresIn: Int
        let idToken: String
        let authorizationDetails: [JSONValue]?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case tokenType = "token_type"
            case expiresIn = "expires_in"
            case idToken = "id_token"
            case authorizationDetails = "authorization_details"
        }
    }

    /// Redeems `form`'s `auth_req_id` (CIBA Core §10–11): the tokens once the phone approved, and before
    /// that why not yet; a client polling faster than its interval is slowed down.
    func token(_ form: [String: String], logger: Logger) async throws -> Tokens {
        try await counted(endpoint: "token", success: "issued") { try await redeem(form, logger: logger) }
    }

    private func redeem(_ form: [String: String], logger: Logger) async throws -> Tokens {
        let client = try await authentication.authenticate(form, at: Self.tokenPath, logger: logger)
        guard form["grant_type"] == Self.grantType else {
            throw OAuthError(status: .badRequest, code: "unsupported_grant_type", description: "The grant_type must be \(Self.grantType).")
        }
        guard let authReqID = form["auth_req_id"] else { throw OAuthError.invalidRequest("'auth_req_id' is missing.") }
        let invalidGrant = OAuthError(status: .badRequest, code: "invalid_grant", description: "The auth_req_id is unknown, another client's, or redeemed.")
        guard let request = try await storage.cibaRequests.find(authReqHash: Self.hash(authReqID)), request.clientID == client.client.id,
            request.redeemedAt == nil
        else { throw invalidGrant }
        let now = clock.now()
        let expired = OAuthError(status: .badRequest, code: "expired_token", description: "The request expired before the phone answered.")
        guard now < request.expiresAt, let approval = try await storage.approvals.find(request.approvalID) else { throw expired }
        switch approval.status(at: now) {
        case .pending:
            // A poll is on time when it is the first to move the next one on: of two at once, on two instances,
            // one is.
            let onTime = request.nextPollAt.map { now >= $0 } ?? true
            let next = now.addingTimeInterval(TimeInterval(request.pollInterval))
            if onTime, try await storage.cibaRequests.movePoll(request.id, from: now, to: next) {
                throw OAuthError(status: .badRequest, code: "authorization_pending", description: "The phone has not answered yet.")
            }
            let interval = request.pollInterval + Self.slowDownStep
            try await storage.cibaRequests.slowDown(request.id, interval: interval, nextPollAt: now.addingTimeInterval(TimeInterval(interval)))
            throw OAuthError(status: .badRequest, code: "slow_down", description: "Poll at most every \(interval) seconds.")
        case .expired:
            throw expired
        case .denied, .failed, .cancelled:
            throw Self.accessDenied("The request was not approved on the phone.", status: .badRequest)
        case .approved:
            return try await tokens(for: request, authReqID: authReqID, approval: approval, client: client, at: now, invalidGrant: invalidGrant)
        }
    }

    private func tokens(
        for request: CIBARequestRecord, authReqID: String, approval: ApprovalRecord, client: AuthenticatedClient, at now: Date,
        invalidGrant: OAuthError
    ) async throws -> Tokens {
        // A phone or key revoked since it approved vouches for nothing.
        guard let device = try await storage.devices.find(approval.deviceID), device.isActive,
            let evidence = try await storage.evidence.newest(userID: approval.userID, approvalID: approval.id, after: nil, limit: 1).first,
            let key = try await storage.biometricKeys.active(
                externalUserID: evidence.externalUserID, inApplicationOfClient: client.client.id, publicKeyID: evidence.publicKeyID),
            key.deviceStatus.map({ $0 == CredentialStatus.active.rawValue }) ?? true
        else { throw Self.accessDenied("The phone or key that approved has been revoked.", status: .badRequest) }
        let user = key.user
        guard try await storage.cibaRequests.redeem(request.id, at: now) else { throw invalidGrant }
        let signed = try approval.authorizationRequest.map(WireJSON.stored)
        let details = signed?["authorization_details"]?.arrayValue ?? []
        let issuedAt = Int(now.timeIntervalSince1970)
        let expiresAt = issuedAt + Int(tokenIssuer.tokenLifetime)
        let amr = TokenIssuer.ordered(approval.amr.split(separator: ",").map(String.init))
        let idToken = try await tokenIssuer.sign(CIBAIDTokenClaims(
            iss: issuer, aud: client.client.id, sub: user.id, iat: issuedAt, exp: expiresAt,
            authTime: approval.authTime.map { Int($0.timeIntervalSince1970) } ?? issuedAt, amr: amr, authReqID: authReqID))
        let accessToken = try await tokenIssuer.sign(
            CIBAAccessTokenClaims(
                iss: issuer, aud: client.client.id, sub: user.id, clientID: client.client.id, scope: request.scope, iat: issuedAt,
                exp: expiresAt, jti: SecureRandom.identifier(prefix: "at"), authorizationDetails: details.isEmpty ? nil : details),
            type: "at+jwt")
        return Tokens(
            accessToken: accessToken, expiresIn: expiresAt - issuedAt, idToken: idToken, authorizationDetails: details.isEmpty ? nil : details)
    }

    /// `access_denied`: 403 at the backchannel endpoint (a policy refused the request), 400 at the token
    /// endpoint (the grant was refused), as CIBA Core §13 and §11 answer.
    static func accessDenied(_ description: String, status: HTTPResponse.Status = .forbidden) -> OAuthError {
        OAuthError(status: status, code: "access_denied", description: description)
    }

    /// How an `auth_req_id` is stored and found.
    static func hash(_ authReqID: String) -> String {
        SecretDigest.hex(authReqID)
    }
}

/// What an `id_token_hint` is read for; its expiry is no reason to refuse it (OpenID Connect Core §3.1.2.1).
struct IDTokenHintClaims: JWTPayload {
    let iss: String
    let aud: String
    let sub: String
    /// Only an access token has one: such a token is no id token.
    let clientID: String?

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub
        case clientID = "client_id"
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// The id token of a redeemed request (DESIGN.md §7).
struct CIBAIDTokenClaims: JWTPayload {
    let iss: String
    let aud: String
    let sub: String
    let iat: Int
    let exp: Int
    let authTime: Int
    let amr: [String]
    /// The `auth_req_id` redeemed (CIBA Core §7.4), which only this client held, and which is spent now.
    let authReqID: String

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, iat, exp, amr
        case authTime = "auth_time"
        case authReqID = "urn:openid:params:jwt:claim:auth_req_id"
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// The access token of a redeemed request (RFC 9068), with the `authorization_details` the phone signed.
struct CIBAAccessTokenClaims: JWTPayload {
    let iss: String
    let aud: String
    let sub: String
    let clientID: String
    let scope: String
    let iat: Int
    let exp: Int
    let jti: String
    let authorizationDetails: [JSONValue]?

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, scope, iat, exp, jti
        case clientID = "client_id"
        case authorizationDetails = "authorization_details"
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
