import Fluent
import Foundation

/// The `demo` application with its public clients `demo-web` and `demo-native`, so a fresh server
/// can run the templates at once.
struct SeedDemoApplication: AsyncMigration {
    static let applicationID = "demo"
    static let webClientID = "demo-web"
    static let nativeClientID = "demo-native"

    func prepare(on database: any Database) async throws {
        let clients = ClientStore(sql: try database.sql)
        let now = Date()
        try await clients.insert(ApplicationRecord(id: Self.applicationID, name: "Countersign Demo", createdAt: now))
        try await clients.insert(ClientRecord(
            id: Self.webClientID, applicationID: Self.applicationID, name: "Demo web app", kind: ClientKind.web.rawValue, createdAt: now))
        try await clients.insert(ClientRecord(
            id: Self.nativeClientID, applicationID: Self.applicationID, name: "Demo phone app", kind: ClientKind.native.rawValue,
            createdAt: now))
    }

    func revert(on database: any Database) async throws {
        try await ClientStore(sql: try database.sql).delete(application: Self.applicationID)
    }
}
