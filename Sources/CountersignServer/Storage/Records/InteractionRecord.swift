import Foundation

/// One journey run. The run's state is one JSON document; `version` guards it against two submits
/// racing with the same interaction token.
struct InteractionRecord: Sendable {
    let id: String
    let journeyID: String
    let clientID: String
    /// SHA-256 (hex) of the interaction token the next submit must present; nil once finished.
    let tokenHash: String?
    let version: Int
    let finished: Bool
    let expiresAt: Date
    /// Sealed while the run goes on, empty once it has finished (`InteractionService`).
    let state: String
    let createdAt: Date
    /// The user the run has identified, once it has. An interaction that never reached one is removed
    /// at expiry rather than kept for the retention: anonymous starts must not fill the database.
    let userID: String?
}

extension InteractionRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        journeyID = try row["journey_id"]
        clientID = try row["client_id"]
        tokenHash = try row["token_hash"]
        version = try row["version"]
        finished = try row["finished"]
        expiresAt = try row["expires_at"]
        state = try row["state"]
        createdAt = try row["created_at"]
        userID = try row["user_id"]
    }

    /// This row as its next save leaves it (`InteractionStore.saveNext(of:…)` writes exactly this).
    func savedNext(state: String, tokenHash: String?, finished: Bool, userID: String?) -> InteractionRecord {
        InteractionRecord(
            id: id, journeyID: journeyID, clientID: clientID, tokenHash: tokenHash, version: version + 1, finished: finished,
            expiresAt: expiresAt, state: state, createdAt: createdAt, userID: userID)
    }
}
