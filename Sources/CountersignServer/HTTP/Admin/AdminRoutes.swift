import CountersignCore
import HTTPTypes
import Hummingbird

/// `/admin/v1`: applications and clients, users, devices, biometric keys, journeys and signing keys.
struct AdminRoutes: RouteGroup {
    let verifier: AdminAccess
    let storage: Storage
    let journeys: JourneyRegistry
    let tokenIssuer: TokenIssuer
    let clock: any WallClock
    let securityEvents: SecurityEvents
    /// Development mode: a backend client's notification endpoint may be plain http on the loopback.
    let development: Bool
    /// The `authorization_details` types a backend client may be allowed.
    let detailTypes: AuthorizationDetailTypes

    func register(on router: Router<ServerRequestContext>) {
        let admin = router.adminAPI(verifier)
        admin.get("applications", use: listApplications)
        admin.post("applications", use: createApplication)
        admin.patch("applications/:applicationID", use: updateApplication)
        admin.get("applications/:applicationID/clients", use: listClients)
        admin.post("applications/:applicationID/clients", use: createClient)
        admin.get("users", use: listUsers)
        admin.get("users/:userID", use: showUser)
        admin.get("users/:userID/devices", use: listDevices)
        admin.get("users/:userID/biometric-keys", use: listBiometricKeys)
        admin.get("users/:userID/browser-credentials", use: listBrowserCredentials)
        admin.put("users/:userID/applications/:applicationID", use: linkUser)
        admin.delete("users/:userID/applications/:applicationID", use: unlinkUser)
        admin.post("devices/:deviceID/revoke", use: revokeDevice)
        admin.post("biometric-keys/:keyID/revoke", use: revokeBiometricKey)
        admin.post("browser-credentials/:credentialID/revoke", use: revokeBrowserCredential)
        admin.get("journeys", use: listJourneys)
        admin.get("journeys/:journeyID", use: showJourney)
        admin.get("journeys/:journeyID/integration-code", use: integrationCode)
        admin.get("signing-keys", use: listSigningKeys)
        admin.post("signing-keys/rotate", use: rotateSigningKey)
    }

    func listApplications(request: Request, context: ServerRequestContext) async throws -> [ApplicationView] {
        let clients = try await clientViews()
        let origins = try await storage.applicationOrigins.all()
        return try await storage.clients.applications().map { application in
            ApplicationView(
                id: application.id, name: application.name, clients: clients.filter { $0.applicationID == application.id },
                allowedOrigins: origins[application.id] ?? [], allowedJourneys: try application.journeyList())
        }
    }

    func createApplication(request: Request, context: ServerRequestContext) async throws -> Response {
        let body = try await request.decodeBody(CreateApplicationRequest.self, context)
        try Self.checkIdentifier(body.id, field: "id")
        try Self.checkName(body.name)
        let origins = try Self.checkOrigins(body.allowedOrigins ?? [])
        let allowedJourneys = try body.allowedJourneys.map(checkJourneys)
        let application = ApplicationRecord(
            id: body.id, name: body.name, createdAt: clock.now(), allowedJourneys: try ApplicationRecord.journeysText(allowedJourneys))
        try await refusingDuplicate("An application '\(body.id)' already exists.") {
            let journeysListed = allowedJourneys.map { "; the journeys its clients may start: [\($0.joined(separator: ", "))]" } ?? ""
            try await securityEvents.recording(.applicationChanged, detail: "application \(body.id) was created\(journeysListed)") { storage in
                try await storage.clients.insert(application)
                try await storage.applicationOrigins.replace(of: application.id, with: origins)
            }
        }
        return try .wire(ApplicationView(id: body.id, name: body.name, clients: [], allowedOrigins: origins, allowedJourneys: allowedJourneys), status: .created)
    }

    /// Changes what the body names: the application's name, its web origins and the journeys its clients may
    /// start (each list replaced as a whole).
    func updateApplication(request: Request, context: ServerRequestContext) async throws -> ApplicationView {
        let application = try await findApplication(context, toChange: true)
        let body = try await request.decodeBody(UpdateApplicationRequest.self, context)
        if let name = body.name { try Self.checkName(name) }
        let origins = try body.allowedOrigins.map(Self.checkOrigins)
        let journeysChange = try body.allowedJourneys.map { try $0.map(checkJourneys) }
        var changes: [String] = []
        if let name = body.name { changes.append("its name set to '\(name)'") }
        if let origins { changes.append("its allowed web origins set to [\(origins.joined(separator: ", "))]") }
        if let journeysChange {
            changes.append(journeysChange.map { "the journeys its clients may start set to [\($0.joined(separator: ", "))]" }
                ?? "the list of the journeys its clients may start lifted")
        }
        if !changes.isEmpty {
            try await securityEvents.recording(
                .applicationChanged, detail: "application \(application.id) changed: \(changes.joined(separator: "; "))"
            ) { storage in
                if let name = body.name { try await storage.clients.rename(application: application.id, to: name) }
                if let origins { try await storage.applicationOrigins.replace(of: application.id, with: origins) }
                if let journeysChange { try await storage.clients.setAllowedJourneys(of: application.id, to: journeysChange) }
            }
        }
        let allowedOrigins: [String]
        if let origins { allowedOrigins = origins } else { allowedOrigins = try await storage.applicationOrigins.origins(of: application.id) }
        return ApplicationView(
            id: application.id, name: body.name ?? application.name,
            clients: try await clientViews(ofApplication: application.id),
            allowedOrigins: allowedOrigins, allowedJourneys: try journeysChange ?? application.journeyList())
    }

    /// The most journeys one application may list.
    static let maximumJourneys = 100

    /// `ids` sorted and without repeats; refuses an id that names no journey a client may start here.
    private func checkJourneys(_ ids: [String]) throws -> [String] {
        guard ids.count <= Self.maximumJourneys else { throw ServiceError.notValid("At most \(Self.maximumJourneys) allowed journeys.") }
        for id in ids where !journeys.startable(id) {
            throw ServiceError.notValid("'\(id.prefix(64))' is no journey a client may start on this server.")
        }
        return Set(ids).sorted()
    }

    /// The most web origins one application may list.
    static let maximumOrigins = 50

    /// `origins` as browsers send them, sorted and without repeats; refuses anything that is not an
    /// http(s) origin (`https://bank.example`, `http://localhost:3000`).
    private static func checkOrigins(_ origins: [String]) throws -> [String] {
        guard origins.count <= maximumOrigins else { throw ServiceError.notValid("At most \(maximumOrigins) allowed origins.") }
        return try Set(origins.map { origin in
            guard origin.count <= 255, let normalized = WebOrigin.normalized(origin) else {
                throw ServiceError.notValid("'\(origin.prefix(255))' is not a web origin: scheme://host[:port], http or https, nothing after.")
            }
            return normalized
        }).sorted()
    }

    func listClients(request: Request, context: ServerRequestContext) async throws -> [ClientView] {
        let application = try await findApplication(context)
        return try await clientViews(ofApplication: application.id)
    }

    /// Every client, or those of one application, with what the backend ones registered.
    private func clientViews(ofApplication applicationID: String? = nil) async throws -> [ClientView] {
        let backends = try await storage.clients.backendClients(ofApplication: applicationID)
        return try await storage.clients.clients(ofApplication: applicationID).map { try ClientView($0, backend: backends[$0.id]) }
    }

    func createClient(request: Request, context: ServerRequestContext) async throws -> Response {
        let application = try await findApplication(context, toChange: true)
        let body = try await request.decodeBody(CreateClientRequest.self, context)
        try Self.checkIdentifier(body.id, field: "id")
        try Self.checkName(body.name)
        guard let kind = ClientKind(rawValue: body.kind) else {
            throw ServiceError.notValid("'kind' must be web, native or backend.")
        }
        let backend: BackendClientRecord?
        if kind == .backend {
            backend = try await BackendClientRegistration.record(
                of: body, clientID: body.id, knownDetailTypes: detailTypes.names, development: development)
        } else {
            try BackendClientRegistration.refuseBackendFields(in: body)
            backend = nil
        }
        let client = ClientRecord(id: body.id, applicationID: application.id, name: body.name, kind: kind.rawValue, createdAt: clock.now())
        try await refusingDuplicate("A client '\(body.id)' already exists.") {
            try await securityEvents.recording(
                .applicationChanged, detail: "\(kind.rawValue) client \(body.id) was created in application \(application.id)"
            ) { storage in
                try await storage.clients.insert(client)
                if let backend { try await storage.clients.insert(backend) }
            }
        }
        return try .wire(ClientView(client, backend: backend), status: .created)
    }

    /// The newest users, a page at a time; with `external_user_id`, the user of that id (from "Ada@Example.com
    /// lost her phone" to the user whose device to revoke; an email is found in any case).
    func listUsers(request: Request, context: ServerRequestContext) async throws -> [UserView] {
        let page = try request.listPage()
        if let externalUserID = request.query("external_user_id") {
            return try await storage.users.find(externalUserID: externalUserID).map { [UserView($0)] } ?? []
        }
        return try await storage.users.newest(after: page.after, limit: page.limit).map(UserView.init)
    }

    func showUser(request: Request, context: ServerRequestContext) async throws -> UserView {
        let user = try await findUser(context)
        var view = UserView(user)
        view.devices = try await deviceViews(ofUser: user.id)
        view.biometricKeys = try await storage.biometricKeys.all(ofUser: user.id).map(BiometricKeyView.init)
        view.applications = try await storage.memberships.applications(ofUser: user.id)
        return view
    }

    /// Lets the user sign in through the clients of one more application.
    func linkUser(request: Request, context: ServerRequestContext) async throws -> HTTPResponse.Status {
        let user = try await findUser(context)
        let application = try await findApplication(context, toChange: true)
        let now = clock.now()
        try await securityEvents.recording(
            .userApplicationsChanged, userID: user.id, detail: "the user was linked to application \(application.id)"
        ) { storage in try await storage.memberships.add(userID: user.id, applicationID: application.id, at: now) }
        return .noContent
    }

    /// Stops the user from being found, or getting tokens, through the application's clients.
    func unlinkUser(request: Request, context: ServerRequestContext) async throws -> HTTPResponse.Status {
        let user = try await findUser(context)
        let application = try await findApplication(context, toChange: true)
        try await securityEvents.recording(
            .userApplicationsChanged, userID: user.id, detail: "the user was unlinked from application \(application.id)"
        ) { storage in
            guard try await storage.memberships.remove(userID: user.id, applicationID: application.id) else {
                throw ServiceError.notFound("The user is not linked to that application.")
            }
        }
        return .noContent
    }

    func listDevices(request: Request, context: ServerRequestContext) async throws -> [DeviceView] {
        try await deviceViews(ofUser: try await findUser(context).id)
    }

    private func deviceViews(ofUser userID: String) async throws -> [DeviceView] {
        let lastAnswered = try await storage.approvals.lastAnswered(byDevicesOf: userID)
        return try await storage.devices.all(ofUser: userID).map { DeviceView($0, lastUsedAt: lastAnswered[$0.id]) }
    }

    func listBiometricKeys(request: Request, context: ServerRequestContext) async throws -> [BiometricKeyView] {
        try await storage.biometricKeys.all(ofUser: try await findUser(context).id).map(BiometricKeyView.init)
    }

    /// Marks a device revoked (once; revoking again changes nothing, and records nothing).
    func revokeDevice(request: Request, context: ServerRequestContext) async throws -> DeviceView {
        let id = context.parameter("deviceID")
        guard let device = try await storage.devices.find(id) else { throw ServiceError.notFound("No such device.") }
        guard device.status == CredentialStatus.active.rawValue else { return DeviceView(device) }
        let now = clock.now()
        return DeviceView(try await securityEvents.recording(
            .credentialRevoked, userID: device.userID, deviceID: id, detail: "the device was revoked"
        ) { storage in
            try await storage.devices.revoke(id, at: now)
            // Its keys stop working with it (they are checked with their device's status) and show so.
            try await storage.biometricKeys.revoke(onDevice: id, at: now)
            return try await storage.devices.find(id) ?? device
        })
    }

    /// Marks a biometric key revoked (once; revoking again changes nothing, and records nothing).
    func revokeBiometricKey(request: Request, context: ServerRequestContext) async throws -> BiometricKeyView {
        let id = context.parameter("keyID")
        guard let key = try await storage.biometricKeys.find(id) else { throw ServiceError.notFound("No such biometric key.") }
        guard key.status == CredentialStatus.active.rawValue else { return BiometricKeyView(key) }
        let now = clock.now()
        return BiometricKeyView(try await securityEvents.recording(
            .credentialRevoked, userID: key.userID, detail: "biometric key \(id) was revoked"
        ) { storage in
            try await storage.biometricKeys.revoke(id, at: now)
            return try await storage.biometricKeys.find(id) ?? key
        })
    }

    func listBrowserCredentials(request: Request, context: ServerRequestContext) async throws -> [BrowserCredentialView] {
        try await storage.browserCredentials.all(ofUser: try await findUser(context).id).map(BrowserCredentialView.init)
    }

    /// Marks a browser credential revoked (once; revoking again changes nothing, and records nothing): that
    /// browser's requests count by its address again.
    func revokeBrowserCredential(request: Request, context: ServerRequestContext) async throws -> BrowserCredentialView {
        let id = context.parameter("credentialID")
        guard let credential = try await storage.browserCredentials.find(id) else { throw ServiceError.notFound("No such browser credential.") }
        guard credential.status == CredentialStatus.active.rawValue else { return BrowserCredentialView(credential) }
        let now = clock.now()
        return BrowserCredentialView(try await securityEvents.recording(
            .credentialRevoked, userID: credential.userID, detail: "browser credential \(id) was revoked"
        ) { storage in
            try await storage.browserCredentials.revoke(id, at: now)
            return try await storage.browserCredentials.find(id) ?? credential
        })
    }

    func listJourneys(request: Request, context: ServerRequestContext) async throws -> [JourneyView] {
        journeys.all.map { JourneyView($0) }
    }

    func showJourney(request: Request, context: ServerRequestContext) async throws -> JourneyView {
        guard let journey = journeys[context.parameter("journeyID")] else { throw ServiceError.notFound("No such journey.") }
        return JourneyView(journey, lint: journeys.lint(journey))
    }

    struct IntegrationCodeView: ResponseEncodable {
        let language: String
        let filename: String
        let code: String
    }

    /// A starting handler for the journey in one SDK (`IntegrationCode`).
    func integrationCode(request: Request, context: ServerRequestContext) async throws -> IntegrationCodeView {
        guard let journey = journeys[context.parameter("journeyID")] else { throw ServiceError.notFound("No such journey.") }
        guard let language = request.query("language").flatMap(IntegrationLanguage.init(rawValue:)) else {
            throw ServiceError.notValid("'language' must be javascript, swift or kotlin.")
        }
        let generated = IntegrationCode.generate(
            for: journey, in: language, startsFromPush: journeys.mobileApproveJourneyIDs.contains(journey.id))
        return IntegrationCodeView(language: language.rawValue, filename: generated.filename, code: generated.code)
    }

    func listSigningKeys(request: Request, context: ServerRequestContext) async throws -> [SigningKeyView] {
        try await storage.signingKeys.all().map(SigningKeyView.init)
    }

    func rotateSigningKey(request: Request, context: ServerRequestContext) async throws -> Response {
        let body = try await request.collectedBody(context)
        let immediately = body.readableBytes == 0 ? false : try await request.decodeBody(RotateSigningKeyRequest.self, context).immediately ?? false
        let key = try await tokenIssuer.rotate(immediately: immediately, recordedBy: securityEvents)
        return try .wire(SigningKeyView(key), status: .created)
    }

    /// The application the path names; `toChange`: refused for the console's own, which operators change
    /// only as `/admin/v1/operators`.
    private func findApplication(_ context: ServerRequestContext, toChange: Bool = false) async throws -> ApplicationRecord {
        guard let application = try await storage.clients.application(context.parameter("applicationID")) else {
            throw ServiceError.notFound("No such application.")
        }
        if toChange, application.id == ConsoleApplication.applicationID {
            throw ServiceError(.forbidden, ErrorCode.forbidden, "The console's application is built in; operators are managed at /admin/v1/operators.")
        }
        return application
    }

    private func findUser(_ context: ServerRequestContext) async throws -> UserRecord {
        guard let user = try await storage.users.find(context.parameter("userID")) else {
            throw ServiceError.notFound("No such user.")
        }
        return user
    }

    private static func checkName(_ name: String) throws {
        if let problem = DisplayName.problem(name) { throw ServiceError.notValid(problem) }
    }

    private static func checkIdentifier(_ value: String, field: String) throws {
        guard ClientRecord.isValidID(value) else {
            throw ServiceError.notValid("'\(field)' must be 1-64 letters, digits, '-' or '_'.")
        }
    }
}
