import CountersignCore
import Foundation
import Journeys

/// The journeys this server runs, loaded and validated at start.
struct JourneyRegistry: Sendable {
    private let journeys: [String: JourneyDefinition]
    /// Journeys that web-to-mobile steps push to phones, or that read what a push carries: they start
    /// only from a push, through `POST /v1/mobile-approve/start`.
    let mobileApproveJourneyIDs: Set<String>

    init(_ journeys: [JourneyDefinition]) {
        self.journeys = Dictionary(journeys.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        mobileApproveJourneyIDs = Set(journeys.flatMap { $0.mobileJourneys.map(\.journeyID) })
            .union(journeys.filter(\.readsMobileApproveParameters).map(\.id))
    }

    /// Loads every journey in `directory`, or the templates built in without one (and the development-only
    /// ones in `development`); throws with every problem found.
    static func load(directory: String?, development: Bool) throws -> JourneyRegistry {
        var registry = JourneyRegistry(try loadDefinitions(directory: directory, development: development))
        registry.lintSource = (directory, development)
        return registry
    }

    private static func loadDefinitions(directory: String?, development: Bool) throws(JourneyLoadError) -> [JourneyDefinition] {
        guard let directory else { return try JourneyLoader.load(files: embeddedJourneyFiles, development: development) }
        return try JourneyLoader.load(directory: URL(fileURLWithPath: directory), development: development)
    }

    /// Where `lint` reads the journeys again; nil for a registry not loaded by `load`.
    private var lintSource: (directory: String?, development: Bool)?

    /// The problems `countersign journeys lint` finds in `journey`'s file now: the journeys directory is read
    /// again, so an edit since start shows before the next start refuses it.
    func lint(_ journey: JourneyDefinition) -> [JourneyValidationError] {
        guard let lintSource, let file = journey.source?.file else { return [] }
        do {
            _ = try Self.loadDefinitions(directory: lintSource.directory, development: lintSource.development)
            return []
        } catch {
            return error.problems.filter { $0.file == file || $0.file == lintSource.directory }
        }
    }

    subscript(id: String) -> JourneyDefinition? { journeys[id] }

    /// A web client starts web journeys, a native client phone journeys, a backend client none, and nobody starts a mobile
    /// approve journey but a phone answering its push; an application that lists journeys
    /// (`allowedJourneys`) lets its clients start those only.
    func check(_ journey: JourneyDefinition, mayStartFrom client: ClientRecord, allowedJourneys: [String]?) throws {
        if mobileApproveJourneyIDs.contains(journey.id) {
            throw ServiceError(
                .forbidden, ErrorCode.journeyNotForClient, "'\(journey.id)' starts only from a push, through /v1/mobile-approve/start.")
        }
        if client.kind == ClientKind.backend.rawValue {
            throw ServiceError(
                .forbidden, ErrorCode.journeyNotForClient,
                "Client '\(client.id)' is a backend client: it asks for approvals at the backchannel authentication endpoint.")
        }
        let native = client.kind == ClientKind.native.rawValue
        guard journey.runsOnPhone == native else {
            throw ServiceError(
                .forbidden, ErrorCode.journeyNotForClient,
                "'\(journey.id)' runs \(journey.runsOnPhone ? "on a phone" : "in a browser"); client '\(client.id)' is a \(client.kind) client.")
        }
        if let allowedJourneys, !allowedJourneys.contains(journey.id) {
            throw ServiceError(
                .forbidden, ErrorCode.journeyNotForClient,
                "The application of client '\(client.id)' does not let its clients start '\(journey.id)'.")
        }
    }

    /// Whether a client may ever start `id`: a journey this server loads that does not start only from a push.
    func startable(_ id: String) -> Bool {
        journeys[id] != nil && !mobileApproveJourneyIDs.contains(id)
    }

    /// All journeys, by id.
    var all: [JourneyDefinition] { journeys.values.sorted { $0.id < $1.id } }
}
