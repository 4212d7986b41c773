import Foundation

/// A one-time enrollment code: the relying party vouches that the person holding it is
/// `externalUserID`, so a phone redeeming it may register for that user. Only the code's keyed hash is kept.
struct EnrollmentCodeRecord: Codable, Sendable {
    let id: String
    let codeHash: String
    let externalUserID: String
    /// The application whose native clients may redeem the code.
    let applicationID: String
    /// The one of them the code may be redeemed through; nil for any.
    let clientID: String?
    let createdAt: Date
    let expiresAt: Date
    let usedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id
        case codeHash = "code_hash"
        case externalUserID = "external_user_id"
        case applicationID = "application_id"
        case clientID = "client_id"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case usedAt = "used_at"
    }
}
