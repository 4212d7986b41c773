import SQLKit
import Foundation
import Journeys

/// Every statement on `users`. External ids are bound in their canonical form (`ExternalUserID`), as they
/// are stored, so that an email finds its user whatever case it is given in.
struct UserStore {
    static let table = "users"
    let sql: any SQLDatabase

    func find(_ id: String) async throws -> UserRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: id)").first(decoding: UserRecord.self)
    }

    /// The user with external id `externalUserID`, whichever applications they belong to.
    func find(externalUserID: String) async throws -> UserRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE external_user_id = \(bind: ExternalUserID.canonical(externalUserID))").first(decoding: UserRecord.self)
    }

    /// The user `externalUserID`, when they belong to the application of client `clientID`.
    func find(externalUserID: String, inApplicationOfClient clientID: String) async throws -> UserRecord? {
        try await sql.raw("SELECT users.* FROM \(Self.user(externalUserID, inApplicationOfClient: clientID))").first(decoding: UserRecord.self)
    }

    /// The user `externalUserID` of the application of client `clientID`, as `users`: what follows the
    /// `FROM` of a read of that user, to which a caller may join more.
    static func user(_ externalUserID: String, inApplicationOfClient clientID: String) -> SQLQueryString {
        """
        \(name: ClientStore.table) client
        JOIN \(name: table) users ON client.id = \(bind: clientID) AND \(isUser(externalUserID, ofApplication: "client.application_id"))
        """
    }

    /// Whether the row `users` is user `externalUserID` and belongs to the application whose id is in
    /// column `application`: the condition of every read of a user of an application.
    static func isUser(_ externalUserID: String, ofApplication application: SQLQueryString) -> SQLQueryString {
        """
        users.external_user_id = \(bind: ExternalUserID.canonical(externalUserID)) AND EXISTS (
            SELECT 1 FROM \(name: MembershipStore.table) membership
            WHERE membership.user_id = users.id AND membership.application_id = \(application))
        """
    }

    func insert(_ user: UserRecord) async throws {
        try await sql.insert(user, into: Self.table).run()
    }

    /// The newest `limit` users (after user `after`: see `newestFirst`).
    func newest(after: String?, limit: Int) async throws -> [UserRecord] {
        try await sql.select().column("*").from(Self.table).newestFirst(by: ["created_at"], of: Self.table, after: after).limit(limit)
            .all(decoding: UserRecord.self)
    }
}
