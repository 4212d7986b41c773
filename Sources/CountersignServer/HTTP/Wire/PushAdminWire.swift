import CountersignCore
import Foundation
import Hummingbird
import Push

/// The body of create and update (DESIGN.md §2). Key material (`private_key_pem`, `service_account`)
/// is accepted, never shown.
struct PushConfigRequest: Decodable {
    /// `apns` or `fcm`.
    var type: String?
    var name: String?
    var bundleID: String?
    var keyID: String?
    var teamID: String?
    var environment: String?
    /// The `.p8` file's contents.
    var privateKeyPEM: String?
    /// Google's JSON key file, as an object or as its text.
    var serviceAccount: JSONValue?
    var projectID: String?
    var endpoint: String?
    var tokenEndpoint: String?
    var caCertificatePEM: String?

    enum CodingKeys: String, CodingKey {
        case type, name, environment, endpoint
        case bundleID = "bundle_id"
        case keyID = "key_id"
        case teamID = "team_id"
        case privateKeyPEM = "private_key_pem"
        case serviceAccount = "service_account"
        case projectID = "project_id"
        case tokenEndpoint = "token_endpoint"
        case caCertificatePEM = "ca_certificate_pem"
    }

    /// The service account as JSON text.
    func serviceAccountText() throws -> String? {
        switch serviceAccount {
        case .none, .some(.null): return nil
        case .some(.string(let text)): return text
        case .some(let object): return String(decoding: try JSONEncoder.wire.encode(object), as: UTF8.self)
        }
    }
}

/// A provider configuration as the admin API shows it: identifiers only, never key material.
struct PushConfigView: ResponseEncodable {
    let id: String
    let type: String
    let name: String
    var bundleID: String?
    var projectID: String?
    let keyID: String
    var teamID: String?
    var clientEmail: String?
    var environment: String?
    let endpoint: String?
    let tokenEndpoint: String?
    let caCertificatePEM: String?
    let createdAt: Date?
    let updatedAt: Date?

    init(_ config: PushConfigRecord) {
        id = config.id
        type = config.provider
        name = config.name
        keyID = config.keyID
        endpoint = config.endpoint
        tokenEndpoint = config.tokenEndpoint
        caCertificatePEM = config.caCertificatePEM
        createdAt = config.createdAt
        updatedAt = config.updatedAt
        PushProviders.named(config.provider)?.show(config, in: &self)
    }

    enum CodingKeys: String, CodingKey {
        case id, type, name, environment, endpoint
        case tokenEndpoint = "token_endpoint"
        case caCertificatePEM = "ca_certificate_pem"
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
struct PushDeliveryView: ResponseEncodable {
    let id: String
    let approvalID: String
    let deviceID: String
    let channel: String
    let status: String
    let reason: String?
    let attempt: Int
    let attemptedAt: Date
    let nextAttemptAt: Date?

    init(_ delivery: PushDeliveryRecord) {
        id = delivery.id
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
