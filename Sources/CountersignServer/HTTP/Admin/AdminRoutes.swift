import CountersignCore
import Fluent
import Vapor

/// `/admin/v1`: applications and clients, users, devices, biometric keys, journeys and signing keys.
struct AdminRoutes: RouteCollection {
    let verifier: AdminKeyVerifier
    let journeys: JourneyRegistry
    let tokenIssuer: TokenIssuer
    let clock: any WallClock

    func boot(routes: any RoutesBuilder) throws {
        let admin = routes.grouped("admin", "v1").grouped(AdminAuthenticationMiddleware(verifier: verifier))
        admin.get("applications", use: listApplications)
        admin.post("applications", use: createApplication)
        admin.get("applications", ":applicationID", "clients", use: listClients)
        admin.post("applications", ":applicationID", "clients", use: createClient)
        admin.get("users", use: listUsers)
        admin.get("users", ":userID", use: showUser)
        admin.get("users", ":userID", "devices", use: listDevices)
        admin.get("users", ":userID", "biometric-keys", use: listBiometricKeys)
        admin.post("devices", ":deviceID", "revoke", use: revokeDevice)
        admin.post("biometric-keys", ":keyID", "revoke", use: revokeBiometricKey)
        admin.get("journeys", use: listJourneys)
        admin.get("journeys", ":journeyID", use: showJourney)
        admin.get("signing-keys", use: listSigningKeys)
        admin.post("signing-keys", "rotate", use: rotateSigningKey)
    }

    func listApplications(request: Request) async throws -> [ApplicationView] {
        let applications = try await ApplicationModel.query(on: request.db).sort(\.$id).all()
        let clients = try await ClientModel.query(on: request.db).sort(\.$id).all()
        return applications.map { application in
            ApplicationView(
                id: application.id!, name: application.name,
                clients: clients.filter { $0.$application.id == application.id }.map(ClientView.init))
        }
    }

    func createApplication(request: Request) async throws -> Response {
        let body = try request.content.decode(CreateApplicationRequest.self)
        try Self.checkIdentifier(body.id, field: "id")
        guard try await ApplicationModel.find(body.id, on: request.db) == nil else {
            throw ServiceError.alreadyExists("An application '\(body.id)' already exists.")
        }
        try await ApplicationModel(id: body.id, name: body.name).create(on: request.db)
        return try await ApplicationView(id: body.id, name: body.name, clients: []).encodeResponse(status: .created, for: request)
    }

    func listClients(request: Request) async throws -> [ClientView] {
        let application = try await findApplication(request)
        return try await ClientModel.query(on: request.db).filter(\.$application.$id == application.id!).sort(\.$id).all()
            .map(ClientView.init)
    }

    func createClient(request: Request) async throws -> Response {
        let application = try await findApplication(request)
        let body = try request.content.decode(CreateClientRequest.self)
        try Self.checkIdentifier(body.id, field: "id")
        guard let kind = ClientKind(rawValue: body.kind) else {
            throw ServiceError.notValid("'kind' must be web or native.")
        }
        guard try await ClientModel.find(body.id, on: request.db) == nil else {
            throw ServiceError.alreadyExists("A client '\(body.id)' already exists.")
        }
        let client = ClientModel(id: body.id, applicationID: application.id!, name: body.name, kind: kind)
        try await client.create(on: request.db)
        return try await ClientView(client).encodeResponse(status: .created, for: request)
    }

    func listUsers(request: Request) async throws -> [UserView] {
        let limit = min(request.query[Int.self, at: "limit"] ?? 100, 1000)
        return try await UserModel.query(on: request.db).sort(\.$createdAt, .descending).limit(limit).all().map(UserView.init)
    }

    func showUser(request: Request) async throws -> UserView {
        let user = try await findUser(request)
        var view = UserView(user)
        view.devices = try await devices(of: user.id!, on: request.db)
        view.biometricKeys = try await biometricKeys(of: user.id!, on: request.db)
        return view
    }

    func listDevices(request: Request) async throws -> [DeviceView] {
        try await devices(of: try await findUser(request).id!, on: request.db)
    }

    func listBiometricKeys(request: Request) async throws -> [BiometricKeyView] {
        try await biometricKeys(of: try await findUser(request).id!, on: request.db)
    }

    func revokeDevice(request: Request) async throws -> DeviceView {
        DeviceView(try await revoke(DeviceModel.self, id: request.parameters.get("deviceID"), on: request.db))
    }

    func revokeBiometricKey(request: Request) async throws -> BiometricKeyView {
        BiometricKeyView(try await revoke(BiometricKeyModel.self, id: request.parameters.get("keyID"), on: request.db))
    }

    /// Marks a device or key revoked (once; revoking again changes nothing).
    private func revoke<Credential: RevocableCredential>(_ type: Credential.Type, id: String?, on database: any Database) async throws -> Credential {
        guard let credential = try await Credential.find(id, on: database) else { throw ServiceError.notFound("No such \(Credential.noun).") }
        if credential.status != CredentialStatus.revoked.rawValue {
            credential.status = CredentialStatus.revoked.rawValue
            credential.revokedAt = clock.now()
            try await credential.save(on: database)
        }
        return credential
    }

    func listJourneys(request: Request) async throws -> [JourneyView] {
        journeys.all.map { JourneyView($0, withSteps: false) }
    }

    func showJourney(request: Request) async throws -> JourneyView {
        guard let journey = journeys[request.parameters.get("journeyID")!] else { throw ServiceError.notFound("No such journey.") }
        return JourneyView(journey, withSteps: true)
    }

    func listSigningKeys(request: Request) async throws -> [SigningKeyView] {
        try await SigningKeyModel.query(on: request.db).sort(\.$createdAt, .descending).all()
            .map { SigningKeyView(kid: $0.id!, createdAt: $0.createdAt, retiredAt: $0.retiredAt) }
    }

    func rotateSigningKey(request: Request) async throws -> Response {
        let kid = try await tokenIssuer.rotate()
        return try await ["kid": kid].encodeResponse(status: .created, for: request)
    }

    private func findApplication(_ request: Request) async throws -> ApplicationModel {
        guard let application = try await ApplicationModel.find(request.parameters.get("applicationID"), on: request.db) else {
            throw ServiceError.notFound("No such application.")
        }
        return application
    }

    private func findUser(_ request: Request) async throws -> UserModel {
        guard let user = try await UserModel.find(request.parameters.get("userID"), on: request.db) else {
            throw ServiceError.notFound("No such user.")
        }
        return user
    }

    private func devices(of userID: String, on database: any Database) async throws -> [DeviceView] {
        try await DeviceModel.query(on: database).filter(\.$user.$id == userID).sort(\.$createdAt).all().map(DeviceView.init)
    }

    private func biometricKeys(of userID: String, on database: any Database) async throws -> [BiometricKeyView] {
        try await BiometricKeyModel.query(on: database).filter(\.$user.$id == userID).sort(\.$createdAt).all()
            .map(BiometricKeyView.init)
    }

    private static func checkIdentifier(_ value: String, field: String) throws {
        let allowed = value.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }
        guard !value.isEmpty, value.count <= 64, allowed else {
            throw ServiceError.notValid("'\(field)' must be 1-64 letters, digits, '-' or '_'.")
        }
    }
}
