import Foundation

/// One provider configuration: an Apple signing key for a bundle id, or a Firebase service account for
/// a project. The key material is sealed under the master key (`sealedSecret`); the rest is shown.
struct PushConfigRecord: Sendable {
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
}

extension PushConfigRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        self.init(id: try row["id"], provider: try row["provider"])
        name = try row["name"]
        appID = try row["app_id"]
        keyID = try row["key_id"]
        issuer = try row["issuer"]
        environment = try row["environment"]
        endpoint = try row["endpoint"]
        tokenEndpoint = try row["token_endpoint"]
        caCertificatePEM = try row["ca_certificate_pem"]
        sealedSecret = try row["sealed_secret"]
        createdAt = try row["created_at"]
        updatedAt = try row["updated_at"]
    }
}
