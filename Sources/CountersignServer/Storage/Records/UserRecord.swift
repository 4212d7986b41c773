import Foundation
import Journeys

/// A person known to the server, identified to applications by their external user id.
struct UserRecord: Sendable {
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

    /// The user as a journey sees it.
    var context: UserContext {
        UserContext(userID: id, externalUserID: externalUserID, email: email)
    }
}

extension UserRecord: RowDecodable {
    /// The external id is read as stored (canonical already).
    init(row: DatabaseRow) throws {
        id = try row["id"]
        externalUserID = try row["external_user_id"]
        email = try row["email"]
        createdAt = try row["created_at"]
    }
}
