import Fluent
import Foundation

/// An application: the unit that groups a web client and a native client. Approvals never cross it.
final class ApplicationModel: Model, @unchecked Sendable {
    static let schema = "applications"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "name") var name: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// A public client of an application: a browser (`web`) or a phone app (`native`).
final class ClientModel: Model, @unchecked Sendable {
    static let schema = "clients"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Parent(key: "application_id") var application: ApplicationModel
    @Field(key: "name") var name: String
    @Field(key: "kind") var kind: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(id: String, applicationID: String, name: String, kind: ClientKind) {
        self.id = id
        self.$application.id = applicationID
        self.name = name
        self.kind = kind.rawValue
    }
}

/// What runs a client.
enum ClientKind: String, Codable, CaseIterable {
    case web
    case native
}
