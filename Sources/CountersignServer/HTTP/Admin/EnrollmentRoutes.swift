import CountersignCore
import Foundation
import Hummingbird
import Journeys

/// `POST /admin/v1/enrollment-codes`: the relying party's backend asks for a one-time code for one of its
/// users, to show them (as text and QR code) so that their new phone can enroll. Each code issued is a
/// security event: with it, a phone joins an existing account.
struct EnrollmentRoutes: RouteGroup {
    let verifier: AdminAccess
    let storage: Storage
    let codes: EnrollmentCodes
    let securityEvents: SecurityEvents

    func register(on router: Router<ServerRequestContext>) {
        router.adminAPI(verifier).post("enrollment-codes", use: issue)
    }

    func issue(request: Request, context: ServerRequestContext) async throws -> Response {
        let body = try await request.decodeBody(IssueEnrollmentCodeRequest.self, context)
        guard ExternalUserID.isAcceptable(body.externalUserID) else {
            throw ServiceError.notValid("'external_user_id' must be 1 to \(ExternalUserID.longest) characters, none a control character.")
        }
        // Every code belongs to an application: one for any application would link its user to whichever
        // application's phone app redeemed it.
        let applicationID: String
        if let clientID = body.clientID {
            guard let client = try await storage.clients.client(clientID), client.kind == ClientKind.native.rawValue,
                body.applicationID.map({ $0 == client.applicationID }) ?? true
            else {
                throw ServiceError.notValid("'client_id' must name a native client (of 'application_id', when given).")
            }
            applicationID = client.applicationID
        } else {
            guard let named = body.applicationID, try await storage.clients.application(named) != nil else {
                throw ServiceError.notValid("'application_id' or 'client_id' must name the application whose phone app redeems the code.")
            }
            applicationID = named
        }
        guard applicationID != ConsoleApplication.applicationID else {
            throw ServiceError.notValid("An operator's phone enrolls with their invitation (POST /admin/v1/operators), no other code.")
        }
        let lifetime = body.expiresIn ?? TimeInterval(EnrollmentCode.defaultLifetime)
        guard lifetime >= 1, lifetime <= TimeInterval(EnrollmentCode.longestLifetime) else {
            throw ServiceError.notValid("'expires_in' must be 1 to \(EnrollmentCode.longestLifetime) seconds.")
        }
        let (record, issued) = codes.make(
            externalUserID: body.externalUserID, applicationID: applicationID, clientID: body.clientID, lifetime: lifetime)
        let user = try await storage.users.find(externalUserID: body.externalUserID)
        try await securityEvents.recording(
            .enrollmentCodeIssued, userID: user?.id,
            detail: "an enrollment code for '\(body.externalUserID)' through \(body.clientID.map { "client '\($0)'" } ?? "any native client")"
                + " of application '\(applicationID)', "
                + "valid until \(issued.expiresAt.formatted(.iso8601))"
        ) { storage in try await storage.enrollmentCodes.insert(record) }
        // The code is a credential until it is used: no cache keeps the answer.
        return try .wire(
            EnrollmentCodeView(code: issued.code, expiresAt: issued.expiresAt, enrollmentURI: issued.link.uri), status: .created,
            cacheControl: "no-store")
    }
}
