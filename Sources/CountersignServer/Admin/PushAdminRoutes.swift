import CountersignCore
import Fluent
import Foundation
import Push
import Vapor

/// `/admin/v1/push-configs` (provider configurations; key material is write-only) and
/// `/admin/v1/push-deliveries` (every delivery attempt).
struct PushAdminRoutes: RouteCollection {
    let verifier: AdminKeyVerifier
    let secrets: SecretBox

    func boot(routes: any RoutesBuilder) throws {
        let admin = routes.grouped("admin", "v1").grouped(AdminAuthenticationMiddleware(verifier: verifier))
        admin.get("push-configs", use: list)
        admin.post("push-configs", use: create)
        admin.get("push-configs", ":configID", use: show)
        admin.patch("push-configs", ":configID", use: update)
        admin.delete("push-configs", ":configID", use: delete)
        admin.get("push-deliveries", use: deliveries)
    }

    func list(request: Request) async throws -> [PushConfigView] {
        try await PushConfigModel.query(on: request.db).sort(\.$createdAt).all().map(PushConfigView.init)
    }

    func show(request: Request) async throws -> PushConfigView {
        PushConfigView(try await find(request))
    }

    func create(request: Request) async throws -> Response {
        let body = try request.content.decode(PushConfigRequest.self)
        guard let provider = body.provider.flatMap(PushProvider.init(rawValue:)) else {
            throw Self.invalid("provider must be apns or fcm")
        }
        let config = PushConfigModel()
        config.id = SecureRandom.identifier(prefix: "pcf")
        config.provider = provider.rawValue
        try apply(body, to: config, secret: nil)
        try await store(config, on: request.db)
        return try await PushConfigView(config).encodeResponse(status: .created, for: request)
    }

    /// Changes the fields given; key material given replaces the stored one, absent keeps it.
    func update(request: Request) async throws -> PushConfigView {
        let config = try await find(request)
        let body = try request.content.decode(PushConfigRequest.self)
        if let provider = body.provider, provider != config.provider {
            throw Self.invalid("provider cannot change; delete this configuration and create another")
        }
        try apply(body, to: config, secret: try secrets.open(config.sealedSecret, boundTo: config.id!))
        try await store(config, on: request.db)
        return PushConfigView(config)
    }

    func delete(request: Request) async throws -> HTTPStatus {
        try await find(request).delete(on: request.db)
        return .noContent
    }

    /// `GET /admin/v1/push-deliveries?approval_id=…&device_id=…&limit=…`: newest first, at most `limit` (100).
    func deliveries(request: Request) async throws -> [PushDeliveryView] {
        var query = PushDeliveryModel.query(on: request.db)
        if let approvalID = request.query[String.self, at: "approval_id"] { query = query.filter(\.$approvalID == approvalID) }
        if let deviceID = request.query[String.self, at: "device_id"] { query = query.filter(\.$deviceID == deviceID) }
        let limit = min(max(request.query[Int.self, at: "limit"] ?? 100, 1), 1000)
        return try await query.sort(\.$attemptedAt, .descending).sort(\.$attempt, .descending).limit(limit).all()
            .map(PushDeliveryView.init)
    }

    /// Fills `config` from the request over its current values and `secret` (the stored key material,
    /// when updating), checks the result as a gateway would use it, and seals the key material.
    private func apply(_ body: PushConfigRequest, to config: PushConfigModel, secret: String?) throws {
        let provider = PushProvider(rawValue: config.provider) ?? .apns
        var missing: [String] = []
        func required(_ value: String?, _ current: String?, _ field: String) -> String {
            guard let value = value ?? current, !value.isEmpty else {
                missing.append(field)
                return ""
            }
            return value
        }
        let isNew = secret == nil
        if let endpoint = body.endpoint {
            guard let url = URL(string: endpoint), url.scheme == "https", url.host != nil, url.path.isEmpty || url.path == "/" else {
                throw Self.invalid("endpoint must be an https URL with no path, such as https://push-proxy.example.com")
            }
            config.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        }
        let newSecret: String
        switch provider {
        case .apns:
            config.appID = required(body.bundleID, isNew ? nil : config.appID, "bundle_id")
            config.keyID = required(body.keyID, isNew ? nil : config.keyID, "key_id")
            config.issuer = required(body.teamID, isNew ? nil : config.issuer, "team_id")
            config.environment = required(body.environment, isNew ? nil : config.environment, "environment")
            newSecret = required(body.privateKey, secret, "private_key")
        case .fcm:
            newSecret = required(try body.serviceAccountText(), secret, "service_account")
            // Project, key id and client email are read from the service account below.
            config.appID = body.projectID ?? (isNew || body.serviceAccount != nil ? "" : config.appID)
            config.keyID = ""
            config.issuer = ""
            config.environment = ""
        }
        guard missing.isEmpty else { throw Self.invalid("missing \(missing.joined(separator: ", "))") }
        let opened: PushProviderConfiguration
        do {
            opened = try PushConfigModel.validated(
                provider: provider, appID: config.appID, keyID: config.keyID, issuer: config.issuer,
                environment: config.environment, endpoint: config.endpoint, secret: newSecret)
        } catch {
            throw Self.invalid(error.message)
        }
        if case .fcm(let account) = opened {
            config.appID = account.projectID
            config.keyID = account.privateKeyID
            config.issuer = account.clientEmail
        }
        config.sealedSecret = try secrets.seal(newSecret, boundTo: config.id!)
    }

    /// Stores `config`. The database keeps one configuration per provider and bundle id / project
    /// (devices are matched on it); a second one is 409.
    private func store(_ config: PushConfigModel, on database: any Database) async throws {
        do {
            try await config.save(on: database)
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw APIError(.conflict, "already_exists", "A \(config.provider) configuration for '\(config.appID)' already exists.")
        }
    }

    private func find(_ request: Request) async throws -> PushConfigModel {
        guard let config = try await PushConfigModel.find(request.parameters.get("configID"), on: request.db) else {
            throw APIError.notFound("No such push configuration.")
        }
        return config
    }

    static func invalid(_ message: String) -> APIError {
        APIError(.badRequest, "invalid_push_config", message)
    }
}

/// The body of create and update. Key material (`private_key`, `service_account`) is accepted, never shown.
struct PushConfigRequest: Content {
    var provider: String?
    var bundleID: String?
    var keyID: String?
    var teamID: String?
    var environment: String?
    /// The `.p8` file's contents.
    var privateKey: String?
    /// Google's JSON key file, as an object or as its text.
    var serviceAccount: JSONValue?
    var projectID: String?
    var endpoint: String?

    enum CodingKeys: String, CodingKey {
        case provider, environment, endpoint
        case bundleID = "bundle_id"
        case keyID = "key_id"
        case teamID = "team_id"
        case privateKey = "private_key"
        case serviceAccount = "service_account"
        case projectID = "project_id"
    }

    /// The service account as JSON text.
    func serviceAccountText() throws -> String? {
        switch serviceAccount {
        case .none, .some(.null): return nil
        case .some(.string(let text)): return text
        case .some(let object): return String(decoding: try JSONEncoder().encode(object), as: UTF8.self)
        }
    }
}

/// A provider configuration as the admin API shows it: identifiers only, never key material.
struct PushConfigView: Content {
    let id: String
    let provider: String
    var bundleID: String?
    var projectID: String?
    let keyID: String
    var teamID: String?
    var clientEmail: String?
    var environment: String?
    let endpoint: String?
    let createdAt: Date?
    let updatedAt: Date?

    init(_ config: PushConfigModel) {
        id = config.id!
        provider = config.provider
        keyID = config.keyID
        endpoint = config.endpoint
        createdAt = config.createdAt
        updatedAt = config.updatedAt
        if config.provider == PushProvider.apns.rawValue {
            bundleID = config.appID
            teamID = config.issuer
            environment = config.environment
        } else {
            projectID = config.appID
            clientEmail = config.issuer
        }
    }

    enum CodingKeys: String, CodingKey {
        case id, provider, environment, endpoint
        case bundleID = "bundle_id"
        case projectID = "project_id"
        case keyID = "key_id"
        case teamID = "team_id"
        case clientEmail = "client_email"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}

/// One delivery attempt.
struct PushDeliveryView: Content {
    let id: String
    let approvalID: String
    let deviceID: String
    let channel: String
    let status: String
    let reason: String?
    let attempt: Int
    let attemptedAt: Date
    let nextAttemptAt: Date?

    init(_ delivery: PushDeliveryModel) {
        id = delivery.id!
        approvalID = delivery.approvalID
        deviceID = delivery.deviceID
        channel = delivery.channel
        status = delivery.status
        reason = delivery.reason
        attempt = delivery.attempt
        attemptedAt = delivery.attemptedAt
        nextAttemptAt = delivery.nextAttemptAt
    }

    enum CodingKeys: String, CodingKey {
        case id, channel, status, reason, attempt
        case approvalID = "approval_id"
        case deviceID = "device_id"
        case attemptedAt = "attempted_at"
        case nextAttemptAt = "next_attempt_at"
    }
}
