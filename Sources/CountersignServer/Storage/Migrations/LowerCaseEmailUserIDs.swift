import FluentKit
import FluentSQL
import Journeys
import Logging

/// Emails compare case-insensitively, so the server keeps a user's external id in its canonical form
/// (`ExternalUserID`). Users stored by an earlier release under an email with capitals
/// (`Ada@Example.com`, from the admin API's enrollment codes) get it in lower case, which is what a
/// sign-in form looks up. Where the lower-case id is another user's already, both are left as they are,
/// and the log says how many: the lower-case one is the user the server finds from then on.
struct LowerCaseEmailUserIDs: AsyncMigration {
    /// Users are read this many at a time, in the order of their ids.
    static let batchSize = 500

    func prepare(on database: any Database) async throws {
        let sql = try database.sql
        var after = ""
        var taken = 0
        while true {
            let rows = try await sql.raw("""
                SELECT id, external_user_id FROM \(name: UserStore.table)
                WHERE id > \(bind: after) AND external_user_id LIKE '%@%' ORDER BY id LIMIT \(bind: Self.batchSize)
                """).all()
            for row in rows {
                let (id, stored) = (try row.decode(column: "id", as: String.self), try row.decode(column: "external_user_id", as: String.self))
                let canonical = ExternalUserID.canonical(stored)
                guard canonical != stored else { continue }
                let changed = try await sql.raw("""
                    UPDATE \(name: UserStore.table) SET external_user_id = \(bind: canonical)
                    WHERE id = \(bind: id) AND NOT EXISTS (
                        SELECT 1 FROM \(name: UserStore.table) other WHERE other.external_user_id = \(bind: canonical))
                    RETURNING id
                    """).all()
                if changed.isEmpty { taken += 1 }
            }
            guard rows.count == Self.batchSize, let last = rows.last else { break }
            after = try last.decode(column: "id", as: String.self)
        }
        if taken > 0 {
            database.logger.warning("""
                \(taken) user(s) keep an email with capitals as their external id: the same email in lower case is \
                another user's, whom the server finds from now on. GET /admin/v1/users lists both.
                """)
        }
    }

    /// Nothing to undo: the lower-case id is the same email.
    func revert(on database: any Database) async throws {}
}
