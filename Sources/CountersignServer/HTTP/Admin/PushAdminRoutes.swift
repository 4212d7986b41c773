import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import Push

/// `/admin/v1/push-configs` (provider configurations; key material is write-only; a test push through
/// one) and `/admin/v1/push-deliveries` (every delivery attempt).
struct PushAdminRoutes: RouteGroup {
    let verifier: AdminAccess
    let storage: Storage
    let secrets: SecretBox
    let securityEvents: SecurityEvents
    let clock: any WallClock
    let gateways: PushGateways

    func register(on router: Router<ServerRequestContext>) {
        let admin = router.adminAPI(verifier)
        admin.get("push-configs", use: list)
        admin.post("push-configs", use: create)
        admin.get("push-configs/:configID", use: show)
        admin.patch("push-configs/:configID", use: update)
        admin.delete("push-configs/:configID", use: delete)
        admin.post("push-configs/:configID/test", use: testPush)
        admin.get("push-deliveries", use: deliveries)
    }

    func list(request: Request, context: ServerRequestContext) async throws -> [PushConfigView] {
        try await storage.pushConfigs.all().map(PushConfigView.init)
    }

    func show(request: Request, context: ServerRequestContext) async throws -> PushConfigView {
        PushConfigView(try await find(context))
    }

    func create(request: Request, context: ServerRequestContext) async throws -> Response {
        let body = try await request.decodeBody(PushConfigRequest.self, context)
        guard let kind = body.type.flatMap(PushProviders.named) else {
            throw Self.invalid("type must be \(PushProviders.names)")
        }
        var config = PushConfigRecord(id: SecureRandom.identifier(prefix: "pcf"), provider: kind.name)
        try apply(body, to: &config, secret: nil)
        config.createdAt = clock.now()
        config.updatedAt = config.createdAt
        try await refusingDuplicate(Self.duplicate(config)) {
            try await recordingChange(of: config.id, "created") { [config] storage in try await storage.pushConfigs.insert(config) }
        }
        return try .wire(PushConfigView(config), status: .created)
    }

    /// Changes the fields given; key material given replaces the stored one, absent keeps it, except that a
    /// change of where the credentials go (an endpoint, the authority trusted for them) needs the key
    /// material given again: the stored key is never sent to a destination its holder has not confirmed.
    func update(request: Request, context: ServerRequestContext) async throws -> PushConfigView {
        var config = try await find(context)
        let body = try await request.decodeBody(PushConfigRequest.self, context)
        if let type = body.type, type != config.provider {
            throw Self.invalid("type cannot change; delete this configuration and create another")
        }
        try apply(body, to: &config, secret: try secrets.open(config.sealedSecret, boundTo: config.id))
        config.updatedAt = clock.now()
        try await refusingDuplicate(Self.duplicate(config)) {
            try await recordingChange(of: config.id, "changed") { [config] storage in try await storage.pushConfigs.update(config) }
        }
        return PushConfigView(config)
    }

    func delete(request: Request, context: ServerRequestContext) async throws -> HTTPResponse.Status {
        let id = context.parameter("configID")
        try await recordingChange(of: id, "deleted") { storage in
            guard try await storage.pushConfigs.delete(id) else { throw ServiceError.notFound("No such push configuration.") }
        }
        return .noContent
    }

    /// Makes the change `write` with its security event, in one transaction.
    private func recordingChange(of id: String, _ change: String, _ write: @escaping @Sendable (Storage) async throws -> Void) async throws {
        try await securityEvents.recording(.pushConfigChanged, detail: "push configuration \(id) \(change)", write)
    }

    /// `GET /admin/v1/push-deliveries?approval_id=…&device_id=…&limit=…&after=…`: newest first, a page at a time.
    func deliveries(request: Request, context: ServerRequestContext) async throws -> [PushDeliveryView] {
        let page = try request.listPage()
        return try await storage.pushJobs.deliveries(
            approvalID: request.query("approval_id"), deviceID: request.query("device_id"),
            after: page.after, limit: page.limit
        ).map(PushDeliveryView.init)
    }

    /// Fills `config` from the request over its current values and `secret` (the stored key material,
    /// when updating), checks the result as a gateway would use it, and seals the key material.
    private func apply(_ body: PushConfigRequest, to config: inout PushConfigRecord, secret: String?) throws {
        guard let kind = PushProviders.named(config.provider) else { throw Self.invalid("type must be \(PushProviders.names)") }
        let isNew = secret == nil
        let before = config
        if let name = body.name, let problem = DisplayName.problem(name) { throw Self.invalid(problem) }
        var fields = GivenFields(isNew: isNew)
        // An empty one goes back to the provider's own, as an empty certificate authority goes back to the system's.
        if let endpoint = body.endpoint {
            config.endpoint = endpoint.isEmpty ? nil : try Self.httpsURL(endpoint, field: "endpoint", pathAllowed: false)
        }
        if let tokenEndpoint = body.tokenEndpoint {
            config.tokenEndpoint = tokenEndpoint.isEmpty ? nil : try Self.httpsURL(tokenEndpoint, field: "token_endpoint", pathAllowed: true)
        }
        if let pem = body.caCertificatePEM { config.caCertificatePEM = pem.isEmpty ? nil : pem }
        let destinationChanged = !isNew
            && (config.endpoint != before.endpoint || config.tokenEndpoint != before.tokenEndpoint
                || config.caCertificatePEM != before.caCertificatePEM)
        let storedSecret = destinationChanged ? "" : (secret ?? "")
        let newSecret = try kind.apply(body, to: &config, &fields, storedSecret: storedSecret)
        guard fields.missing.isEmpty else {
            let why = destinationChanged ? " (a new endpoint or certificate authority needs the key material given again)" : ""
            throw Self.invalid("missing \(fields.missing.joined(separator: ", "))\(why)")
        }
        do {
            kind.adopt(try kind.open(config, secret: newSecret), into: &config)
        } catch {
            throw Self.invalid(error.message)
        }
        // A configuration is named after its app unless given a name.
        config.name = body.name ?? (isNew ? config.appID : config.name)
        config.sealedSecret = try secrets.seal(newSecret, boundTo: config.id)
    }

    /// `text` when it is an https URL (with no path unless `pathAllowed`), without a trailing slash. No
    /// query or fragment (the requests' paths are added to it) and no user or password (the URL is shown in
    /// every answer about the configuration).
    private static func httpsURL(_ text: String, field: String, pathAllowed: Bool) throws -> String {
        guard let url = URL(string: text), url.scheme == "https", url.host?.isEmpty == false,
            url.user == nil, url.password == nil, url.query == nil, url.fragment == nil,
            pathAllowed || url.path.isEmpty || url.path == "/"
        else {
            throw invalid(pathAllowed
                ? "\(field) must be an https URL"
                : "\(field) must be an https URL with no path, such as https://push-proxy.example.com")
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    /// The database keeps one configuration per provider and bundle id / project (devices are matched
    /// on it); a second one is refused with this.
    private static func duplicate(_ config: PushConfigRecord) -> String {
        "A \(config.provider) configuration for '\(config.appID)' already exists."
    }

    private func find(_ context: ServerRequestContext) async throws -> PushConfigRecord {
        guard let config = try await storage.pushConfigs.find(context.parameter("configID")) else {
            throw ServiceError.notFound("No such push configuration.")
        }
        return config
    }

    static func invalid(_ message: String) -> ServiceError {
        ServiceError(.invalidRequest, ErrorCode.invalidPushConfig, message)
    }

    struct TestPushRequest: Decodable {
        let deviceID: String

        enum CodingKeys: String, CodingKey {
            case deviceID = "device_id"
        }
    }

    /// The provider's answer to a test push.
    struct TestPushResult: Encodable {
        let delivered: Bool
        /// `delivered`, `retryable`, `token_invalid` or `rejected`.
        let outcome: String
        /// The provider's reason, when it refused.
        let reason: String?
    }

    /// `POST /admin/v1/push-configs/{id}/test`: one notification through the configuration to a device of
    /// its app, which the phone shows and ignores; the answer is the provider's. Recorded as a security event.
    func testPush(request: Request, context: ServerRequestContext) async throws -> Response {
        let config = try await find(context)
        let body = try await request.decodeBody(TestPushRequest.self, context)
        guard let device = try await storage.devices.find(body.deviceID) else { throw ServiceError.notFound("No such device.") }
        guard let provider = PushProviders.named(config.provider), device.pushChannel == provider.channel.rawValue,
            device.pushAppID == config.appID
        else {
            throw Self.invalid(
                "device \(device.id) receives its pushes through \(device.pushChannel) for '\(device.pushAppID ?? "no app")', "
                    + "not through this configuration (\(config.provider) for '\(config.appID)')")
        }
        try await gateways.refresh()
        let now = clock.now()
        let notification = PushNotification(
            title: "Countersign test", body: "A test notification sent from the console.", payload: ["type": "test"],
            expiresAt: now.addingTimeInterval(60), collapseID: "countersign-test")
        let target = PushTarget(deviceID: device.id, channel: provider.channel, token: device.pushToken, appID: device.pushAppID)
        let result = switch try await gateways.gateway(for: provider.channel).send(notification, to: target) {
        case .delivered: TestPushResult(delivered: true, outcome: "delivered", reason: nil)
        case .retryable(let reason, _): TestPushResult(delivered: false, outcome: "retryable", reason: reason)
        case .tokenInvalid(let reason): TestPushResult(delivered: false, outcome: "token_invalid", reason: reason)
        case .rejected(let reason): TestPushResult(delivered: false, outcome: "rejected", reason: reason)
        }
        try await securityEvents.recordNow(
            .pushConfigChanged, userID: device.userID, deviceID: device.id,
            detail: "a test push through push configuration \(config.id) to device \(device.id): \(result.outcome)\(result.reason.map { " (\($0))" } ?? "")")
        return try .wire(result, cacheControl: "no-store")
    }
}
