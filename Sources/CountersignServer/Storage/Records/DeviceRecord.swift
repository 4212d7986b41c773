import Foundation

/// A phone bound to a user by its device key, and how to reach it.
struct DeviceRecord: Codable, Sendable {
    let id: String
    let userID: String
    /// Base64 SPKI DER of the P-256 device key.
    let publicKey: String
    let name: String
    let model: String
    let os: String
    let pushChannel: String
    let pushToken: String?
    let pushAppID: String?
    /// Set when the push provider said the token is no longer valid; the device stays registered.
    let pushTokenInvalidAt: Date?
    let pushTokenInvalidReason: String?
    /// A `CredentialStatus`.
    let status: String
    let createdAt: Date?
    let revokedAt: Date?

    /// Not revoked: it may be pushed to and may answer.
    var isActive: Bool { status == CredentialStatus.active.rawValue }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, name, model, os, status
        case userID = "user_id"
        case publicKey = "public_key"
        case pushChannel = "push_channel"
        case pushToken = "push_token"
        case pushAppID = "push_app_id"
        case pushTokenInvalidAt = "push_token_invalid_at"
        case pushTokenInvalidReason = "push_token_invalid_reason"
        case createdAt = "created_at"
        case revokedAt = "revoked_at"
    }
}
