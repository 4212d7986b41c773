import CountersignCore
import Foundation
import Hummingbird
import Journeys

/// `/admin/v1/operators`: the people who may sign in to the console. Inviting one issues an enrollment
/// code for their phone through the console application's native client (`ConsoleApplication`).
struct OperatorRoutes: RouteGroup {
    let verifier: AdminAccess
    let storage: Storage
    let codes: EnrollmentCodes
    let securityEvents: SecurityEvents
    let clock: any WallClock

    func register(on router: Router<ServerRequestContext>) {
        let admin = router.adminAPI(verifier)
        admin.get("operators", use: list)
        admin.post("operators", use: invite)
        admin.delete("operators/:operatorID", use: remove)
    }

    struct InviteRequest: Decodable {
        let email: String
        let role: String?
    }

    struct OperatorView: ResponseEncodable {
        let id: String
        let email: String
        let role: String
        let createdAt: Date
        /// Whether a phone was enrolled for them through the console's native client and is not revoked:
        /// they can sign in.
        let enrolled: Bool

        enum CodingKeys: String, CodingKey {
            case id, email, role, enrolled
            case createdAt = "created_at"
        }
    }

    struct InvitationView: ResponseEncodable {
        let `operator`: OperatorView
        let enrollmentCode: String
        let enrollmentURI: String
        let expiresAt: Date

        enum CodingKeys: String, CodingKey {
            case `operator`
            case enrollmentCode = "enrollment_code"
            case enrollmentURI = "enrollment_uri"
            case expiresAt = "expires_at"
        }
    }

    func list(request: Request, context: ServerRequestContext) async throws -> [OperatorView] {
        let enrolled = try await storage.devices.usersWithActiveDevice(enrolledThrough: ConsoleApplication.phoneClientID)
        return try await storage.operators.all().map {
            OperatorView(id: $0.id, email: $0.email, role: $0.role, createdAt: $0.createdAt, enrolled: enrolled.contains($0.email))
        }
    }

    /// Adds an operator and issues the enrollment code their phone redeems (valid a day).
    func invite(request: Request, context: ServerRequestContext) async throws -> Response {
        let body = try await request.decodeBody(InviteRequest.self, context)
        let email = ExternalUserID.canonical(body.email)
        guard ExternalUserID.isAcceptable(email), email.contains("@") else {
            throw ServiceError.notValid("'email' must be an email address of at most \(ExternalUserID.longest) characters.")
        }
        guard let role = OperatorRole(rawValue: body.role ?? OperatorRole.auditor.rawValue) else {
            throw ServiceError.notValid("'role' must be admin or auditor.")
        }
        let record = OperatorRecord(id: SecureRandom.identifier(prefix: OperatorRecord.idPrefix), email: email, role: role.rawValue, createdAt: clock.now())
        let (code, issued) = codes.make(
            externalUserID: email, applicationID: ConsoleApplication.applicationID, clientID: ConsoleApplication.phoneClientID,
            lifetime: TimeInterval(EnrollmentCode.longestLifetime))
        try await refusingDuplicate("'\(email)' is an operator already.") {
            try await securityEvents.recording(
                .operatorChanged,
                detail: "\(email) was invited to the console as \(role.rawValue); their enrollment code is valid until \(issued.expiresAt.formatted(.iso8601))"
            ) { storage in
                try await storage.operators.insert(record)
                try await storage.enrollmentCodes.insert(code)
            }
        }
        let enrolled = try await storage.devices.usersWithActiveDevice(enrolledThrough: ConsoleApplication.phoneClientID).contains(email)
        let view = OperatorView(id: record.id, email: email, role: record.role, createdAt: record.createdAt, enrolled: enrolled)
        return try .wire(
            InvitationView(operator: view, enrollmentCode: issued.code, enrollmentURI: issued.link.uri, expiresAt: issued.expiresAt),
            status: .created, cacheControl: "no-store")
    }

    /// Removes the operator: their sessions end at once, the phones they enrolled for the console are
    /// revoked and their unused enrollment codes void, so that inviting them again starts afresh.
    func remove(request: Request, context: ServerRequestContext) async throws -> HTTPResponse.Status {
        let id = context.parameter("operatorID")
        guard let record = try await storage.operators.find(id) else { throw ServiceError.notFound("No such operator.") }
        let user = try await storage.users.find(externalUserID: record.email, inApplicationOfClient: ConsoleApplication.phoneClientID)
        let now = clock.now()
        try await securityEvents.recording(
            .operatorChanged, userID: user?.id, detail: "\(record.email) was removed from the console's operators"
        ) { storage in
            guard try await storage.operators.delete(id) else { throw ServiceError.notFound("No such operator.") }
            try await storage.enrollmentCodes.voidUnused(externalUserID: record.email, applicationID: ConsoleApplication.applicationID, at: now)
            guard let user else { return }
            _ = try await storage.memberships.remove(userID: user.id, applicationID: ConsoleApplication.applicationID)
            for device in try await storage.devices.all(ofUser: user.id) where device.clientID == ConsoleApplication.phoneClientID {
                try await storage.devices.revoke(device.id, at: now)
                try await storage.biometricKeys.revoke(onDevice: device.id, at: now)
            }
        }
        return .noContent
    }
}
