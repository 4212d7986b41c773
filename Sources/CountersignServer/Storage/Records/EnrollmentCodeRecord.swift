import Foundation

/// A one-time enrollment code: the relying party vouches that the person holding it is
/// `externalUserID`, so a phone redeeming it may register for that user. Only the code's keyed hash is kept.
struct EnrollmentCodeRecord: Sendable {
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
}

extension EnrollmentCodeRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        codeHash = try row["code_hash"]
        externalUserID = try row["external_user_id"]
        applicationID = try row["application_id"]
        clientID = try row["client_id"]
        createdAt = try row["created_at"]
        expiresAt = try row["expires_at"]
        usedAt = try row["used_at"]
    }
}
