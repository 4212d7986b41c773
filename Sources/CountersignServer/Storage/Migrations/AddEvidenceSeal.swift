import FluentKit

/// Each signature's evidence keeps the server's seal, made as the signature is recorded (`EvidenceSealer`).
/// Rows from before have none, and are handed out without one.
struct AddEvidenceSeal: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(EvidenceStore.table).field("seal", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(EvidenceStore.table).deleteField("seal").update()
    }
}
