import FluentKit
import FluentSQL

/// A signing key is published before it signs (`activates_at`), so that relying parties' cached key sets
/// hold it by the time tokens carry it. Keys from before signed from their creation.
struct AddSigningKeyActivation: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(SigningKeyStore.table).field("activates_at", .datetime).update()
        try await (database as! any SQLDatabase).raw("UPDATE \(ident: SigningKeyStore.table) SET activates_at = created_at").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(SigningKeyStore.table).deleteField("activates_at").update()
    }
}
