import SQLKit
import Foundation

/// Every statement on `browser_credentials`.
struct BrowserCredentialStore {
    static let table = "browser_credentials"
    let sql: any SQLDatabase

    func insert(_ credential: BrowserCredentialRecord) async throws {
        try await sql.insert(credential, into: Self.table).run()
    }

    func find(_ id: String) async throws -> BrowserCredentialRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: id)").first(decoding: BrowserCredentialRecord.self)
    }

    /// The credential whose secret hashes to `secretHash`, whatever its status.
    func find(secretHash: String) async throws -> BrowserCredentialRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE secret_hash = \(bind: secretHash)")
            .first(decoding: BrowserCredentialRecord.self)
    }

    /// All the user's credentials, revoked and expired ones too, oldest first.
    func all(ofUser userID: String) async throws -> [BrowserCredentialRecord] {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE user_id = \(bind: userID) ORDER BY created_at")
            .all(decoding: BrowserCredentialRecord.self)
    }

    func revoke(_ id: String, at now: Date) async throws {
        try await revokeCredential(id, in: Self.table, at: now, on: sql)
    }
}
