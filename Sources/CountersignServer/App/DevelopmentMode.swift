import Foundation
import Logging

/// What separates a development start from a production one (`Configuration.Mode`).
enum DevelopmentMode {
    static let demoApplicationID = "demo"
    static let demoWebClientID = "demo-web"
    static let demoNativeClientID = "demo-native"

    /// A development start: the `demo` application with its public clients, created when missing, and a
    /// warning that cannot be missed.
    static func prepare(_ storage: Storage, clock: any WallClock, logger: Logger) async throws {
        logger.warning("""
            DEVELOPMENT MODE: the demo application and the development-only journeys are loaded; \
            mobile_registration_by_email lets anyone register a phone for any email. Never expose this server.
            """)
        let clients = storage.clients
        guard try await clients.application(demoApplicationID) == nil else { return }
        let now = clock.now()
        try await storage.transaction { storage in
            let clients = storage.clients
            try await clients.insert(ApplicationRecord(id: demoApplicationID, name: "Countersign Demo", createdAt: now, allowedJourneys: nil))
            try await clients.insert(ClientRecord(
                id: demoWebClientID, applicationID: demoApplicationID, name: "Demo web app", kind: ClientKind.web.rawValue, createdAt: now))
            try await clients.insert(ClientRecord(
                id: demoNativeClientID, applicationID: demoApplicationID, name: "Demo phone app", kind: ClientKind.native.rawValue,
                createdAt: now))
        }
    }

    /// A production start refuses a database a development start prepared: its demo clients are public.
    static func refuseDemoApplication(_ storage: Storage) async throws {
        if try await storage.clients.application(demoApplicationID) != nil { throw DemoApplicationInProduction() }
    }

    /// Removes the demo application and its clients (`countersign migrate --remove-demo-application`).
    static func removeDemoApplication(_ storage: Storage) async throws {
        try await storage.transaction { storage in try await storage.clients.delete(application: demoApplicationID) }
    }
}

struct DemoApplicationInProduction: Error, CustomStringConvertible {
    var description: String {
        """
        This database holds the demo application ('demo', with the public clients demo-web and demo-native), \
        which only a development start creates. Remove it with `countersign migrate --remove-demo-application`, \
        or start with --dev.
        """
    }
}
