import Foundation
import Journeys

/// Every statement on `users`. External ids are bound in their canonical form (`ExternalUserID`), as they
/// are stored, so that an email finds its user whatever case it is given in.
struct UserStore {
    static let table = "users"
    let db: any SQLExecutor

    func find(_ id: String) async throws -> UserRecord? {
        try await db.first(UserRecord.self, "SELECT * FROM users WHERE id = $1", id)
    }

    /// The user with external id `externalUserID`, whichever applications they belong to.
    func find(externalUserID: String) async throws -> UserRecord? {
        try await db.first(UserRecord.self, "SELECT * FROM users WHERE external_user_id = $1", ExternalUserID.canonical(externalUserID))
    }

    /// The user `externalUserID`, when they belong to the application of client `clientID`.
    func find(externalUserID: String, inApplicationOfClient clientID: String) async throws -> UserRecord? {
        try await db.first(UserRecord.self, Self.findInApplicationOfClient, ExternalUserID.canonical(externalUserID), clientID)
    }

    private static let findInApplicationOfClient = "SELECT users.* FROM \(user("$1", inApplicationOfClient: "$2"))"

    /// The user of the application of a client, as `users`: what follows the `FROM` of a read of that
    /// user, to which a caller may join more. `externalUserID` and `clientID` are the parameters the caller
    /// binds the canonical external id (`ExternalUserID.canonical`) and the client's id to; they first
    /// appear in the text in that order (`user("$1", inApplicationOfClient: "$2")`). Build the statement
    /// once, as a constant.
    static func user(_ externalUserID: String, inApplicationOfClient clientID: String) -> String {
        """
        clients client
        JOIN users users ON \(isUser(externalUserID, ofApplication: "client.application_id")) AND client.id = \(clientID)
        """
    }

    /// Whether the row `users` is the user whose canonical external id is bound to parameter
    /// `externalUserID` (`"$1"`, say) and belongs to the application whose id is in column `application`:
    /// the condition of every read of a user of an application. It binds no other parameter.
    static func isUser(_ externalUserID: String, ofApplication application: String) -> String {
        """
        users.external_user_id = \(externalUserID) AND EXISTS (
            SELECT 1 FROM user_applications membership
            WHERE membership.user_id = users.id AND membership.application_id = \(application))
        """
    }

    func insert(_ user: UserRecord) async throws {
        try await db.run(
            "INSERT INTO users (id, external_user_id, email, created_at) VALUES ($1, $2, $3, $4)",
            user.id, user.externalUserID, user.email, user.createdAt)
    }

    /// The newest `limit` users, newest first by creation, then by id; with `after` (the id of the last
    /// user of the page before) those after that user. Pages neither repeat nor skip a user, whatever users
    /// are added meanwhile; an `after` that names no user gives none.
    func newest(after: String?, limit: Int) async throws -> [UserRecord] {
        if let after {
            try await db.all(UserRecord.self, """
                SELECT * FROM users WHERE (created_at, id) < (SELECT created_at, id FROM users WHERE id = $1)
                ORDER BY created_at DESC, id DESC LIMIT $2
                """, after, limit)
        } else {
            try await db.all(UserRecord.self, "SELECT * FROM users ORDER BY created_at DESC, id DESC LIMIT $1", limit)
        }
    }
}
