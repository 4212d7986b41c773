import Foundation
import Journeys

/// The journeys this server runs, loaded and validated at start.
struct JourneyRegistry: Sendable {
    private let journeys: [String: JourneyDefinition]

    init(_ journeys: [JourneyDefinition]) {
        self.journeys = Dictionary(journeys.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Loads every journey in `directory` (and its development-only ones in `development`); throws with
    /// every problem found.
    static func load(directory: String, development: Bool) throws -> JourneyRegistry {
        JourneyRegistry(try JourneyLoader.load(directory: URL(fileURLWithPath: directory), development: development))
    }

    subscript(id: String) -> JourneyDefinition? { journeys[id] }

    /// All journeys, by id.
    var all: [JourneyDefinition] { journeys.values.sorted { $0.id < $1.id } }
}
