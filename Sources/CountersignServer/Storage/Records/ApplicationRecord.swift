import Foundation

/// An application: the unit that groups a web client and a native client. Approvals never cross it.
struct ApplicationRecord: Sendable {
    let id: String
    let name: String
    let createdAt: Date?
    /// JSON text: the ids of the journeys its clients may start (`AddApplicationJourneys`); nil lets them
    /// start any their kind may.
    let allowedJourneys: String?

    /// The ids `allowedJourneys` lists, or nil when there is no list (any journey). A list that cannot be
    /// read throws: it is never taken for no list.
    func journeyList() throws -> [String]? {
        try Self.journeyList(allowedJourneys)
    }

    static func journeyList(_ text: String?) throws -> [String]? {
        try text.map { try JSONDecoder.wire.decode([String].self, from: Data($0.utf8)) }
    }

    static func journeysText(_ journeys: [String]?) throws -> String? {
        try journeys.map { String(decoding: try JSONEncoder.wire.encode($0), as: UTF8.self) }
    }
}

extension ApplicationRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        name = try row["name"]
        createdAt = try row["created_at"]
        allowedJourneys = try row["allowed_journeys"]
    }
}

/// A client of an application: a browser (`web`), a phone app (`native`), or a relying party's server that
/// asks through OpenID CIBA (`backend`, with a `BackendClientRecord`).
struct ClientRecord: Sendable {
    let id: String
    let applicationID: String
    let name: String
    /// A `ClientKind`.
    let kind: String
    let createdAt: Date?
}

extension ClientRecord {
    /// Whether `text` is an id as the admin API makes them for applications and clients: 1 to 64 ASCII
    /// letters, digits, `-` or `_`. Nothing else is looked up or logged as one.
    static func isValidID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64
            && text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }
    }
}

extension ClientRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        applicationID = try row["application_id"]
        name = try row["name"]
        kind = try row["kind"]
        createdAt = try row["created_at"]
    }
}

/// What runs a client.
enum ClientKind: String, Codable, CaseIterable {
    case web
    case native
    case backend
}
