import Fluent

/// The `demo` application with its public clients `demo-web` and `demo-native`, so a fresh server
/// can run the templates at once.
struct SeedDemoApplication: AsyncMigration {
    static let applicationID = "demo"
    static let webClientID = "demo-web"
    static let nativeClientID = "demo-native"

    func prepare(on database: any Database) async throws {
        try await ApplicationModel(id: Self.applicationID, name: "Countersign Demo").create(on: database)
        try await ClientModel(id: Self.webClientID, applicationID: Self.applicationID, name: "Demo web app", kind: .web)
            .create(on: database)
        try await ClientModel(id: Self.nativeClientID, applicationID: Self.applicationID, name: "Demo phone app", kind: .native)
            .create(on: database)
    }

    func revert(on database: any Database) async throws {
        try await ClientModel.query(on: database).filter(\.$application.$id == Self.applicationID).delete()
        try await ApplicationModel.query(on: database).filter(\.$id == Self.applicationID).delete()
    }
}
