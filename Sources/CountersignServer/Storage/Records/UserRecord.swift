import Foundation
import Journeys

/// A person known to the server, identified to applications by their external user id.
struct UserRecord: Codable, Sendable {
    let id: String
    let externalUserID: String
    let email: String?
    let createdAt: Date?

    /// A user to store: `externalUserID` is kept in its canonical form.
    init(id: String, externalUserID: String, email: String?, createdAt: Date?) {
        self.id = id
        self.externalUserID = ExternalUserID.canonical(externalUserID)
        self.email = email
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, email
        case externalUserID = "external_user_id"
        case createdAt = "created_at"
    }

    /// The user as a journey sees it.
    var context: UserContext {
        UserContext(userID: id, externalUserID: externalUserID, email: email)
    }
}
