import Foundation

/// An application: the unit that groups a web client and a native client. Approvals never cross it.
struct ApplicationRecord: Codable, Sendable {
    let id: String
    let name: String
    let createdAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, name
        case createdAt = "created_at"
    }
}

/// A public client of an application: a browser (`web`) or a phone app (`native`).
struct ClientRecord: Codable, Sendable {
    let id: String
    let applicationID: String
    let name: String
    /// A `ClientKind`.
    let kind: String
    let createdAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, name, kind
        case applicationID = "application_id"
        case createdAt = "created_at"
    }
}

/// What runs a client.
enum ClientKind: String, Codable, CaseIterable {
    case web
    case native
}
