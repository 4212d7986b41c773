import Fluent
import Foundation

/// A person known to the server, identified to applications by their external user id.
final class UserModel: Model, @unchecked Sendable {
    static let schema = "users"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "external_user_id") var externalUserID: String
    @OptionalField(key: "email") var email: String?
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(id: String, externalUserID: String, email: String?) {
        self.id = id
        self.externalUserID = externalUserID
        self.email = email
    }
}
