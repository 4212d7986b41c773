import Fluent

/// A server-wide secret created at first start (e.g. the key of the web OTP hashes).
final class ServerSecretModel: Model, @unchecked Sendable {
    static let schema = "server_secrets"

    @ID(custom: "id", generatedBy: .user) var id: String?
    /// Base64.
    @Field(key: "value") var value: String

    init() {}

    init(id: String, value: String) {
        self.id = id
        self.value = value
    }
}
