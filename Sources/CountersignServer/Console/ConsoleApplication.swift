import Foundation

/// The console's own application: its web client signs operators in with `signInJourney`, approved on the
/// phone they enrolled through its native client. Created at every start when missing, in production as
/// in development; operators are its users (`OperatorRecord`).
enum ConsoleApplication {
    static let applicationID = "countersign-console"
    static let webClientID = "countersign-console"
    static let phoneClientID = "countersign-console-phone"
    /// The web sign-in with number matching.
    static let signInJourney = "web_login"
    /// What its clients may start: the sign-in, and the phone's enrollment with an operator's code.
    static let allowedJourneys = [signInJourney, "mobile_registration"]

    static func prepare(_ storage: Storage, clock: any WallClock) async throws {
        guard try await storage.clients.application(applicationID) == nil else { return }
        let now = clock.now()
        try await storage.transaction { storage in
            let clients = storage.clients
            try await clients.insert(ApplicationRecord(
                id: applicationID, name: "Countersign console", createdAt: now,
                allowedJourneys: try ApplicationRecord.journeysText(allowedJourneys)))
            try await clients.insert(ClientRecord(
                id: webClientID, applicationID: applicationID, name: "Console", kind: ClientKind.web.rawValue, createdAt: now))
            try await clients.insert(ClientRecord(
                id: phoneClientID, applicationID: applicationID, name: "Operators' phones", kind: ClientKind.native.rawValue, createdAt: now))
        }
    }
}
