import Foundation

/// One provider configuration: an Apple signing key for a bundle id, or a Firebase service account for
/// a project. The key material is sealed under the master key (`sealedSecret`); the rest is shown.
struct PushConfigRecord: Codable, Sendable {
    let id: String
    /// `apns` or `fcm` (`type` in the admin API).
    let provider: String
    /// What the operator calls it.
    var name = ""
    /// APNs: the bundle id; FCM: the Firebase project id. Devices are matched on it.
    var appID = ""
    /// APNs: the key id; FCM: the service account's private key id.
    var keyID = ""
    /// APNs: the team id; FCM: the service account's client email.
    var issuer = ""
    /// APNs: `production` or `sandbox`; empty for FCM.
    var environment = ""
    /// Where requests go instead of the provider's own endpoint (a relay, or a test server).
    var endpoint: String?
    /// FCM: where access tokens come from instead of the service account's `token_uri`.
    var tokenEndpoint: String?
    /// Authorities the endpoints are trusted by instead of the system's (a relay's, a test server's).
    var caCertificatePEM: String?
    /// APNs: the `.p8` PEM; FCM: the service account JSON; sealed, base64.
    var sealedSecret = ""
    var createdAt: Date?
    var updatedAt: Date?

    init(id: String, provider: String) {
        self.id = id
        self.provider = provider
    }

    enum CodingKeys: String, CodingKey {
        case id, provider, name, issuer, environment, endpoint
        case appID = "app_id"
        case keyID = "key_id"
        case tokenEndpoint = "token_endpoint"
        case caCertificatePEM = "ca_certificate_pem"
        case sealedSecret = "sealed_secret"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}
