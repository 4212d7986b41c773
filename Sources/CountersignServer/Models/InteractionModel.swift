import Fluent
import Foundation

/// One journey run. The run's state is one JSON document; `version` guards it against two submits
/// racing with the same interaction token.
final class InteractionModel: Model, @unchecked Sendable {
    static let schema = "interactions"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "journey_id") var journeyID: String
    @Field(key: "client_id") var clientID: String
    /// SHA-256 (hex) of the interaction token the next submit must present; nil once finished.
    @OptionalField(key: "token_hash") var tokenHash: String?
    @Field(key: "version") var version: Int
    @Field(key: "finished") var finished: Bool
    @Field(key: "expires_at") var expiresAt: Date
    @Field(key: "state") var state: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(id: String, journeyID: String, clientID: String, tokenHash: String?, finished: Bool, expiresAt: Date, state: String) {
        self.id = id
        self.journeyID = journeyID
        self.clientID = clientID
        self.tokenHash = tokenHash
        self.version = 1
        self.finished = finished
        self.expiresAt = expiresAt
        self.state = state
    }
}
