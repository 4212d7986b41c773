@testable import CountersignServer
import Testing

extension TestServer {
    /// Runs `calls` at once, none of them able to write until every one has had time to read: on SQLite
    /// the test holds the one writer, on PostgreSQL the tables `tables` (reads go on). So all of them decide
    /// on the same rows, as calls arriving in the same instant on several instances would. Returns their
    /// results in the order of `calls`.
    func atOnce<Result: Sendable>(
        writingTo tables: [String], _ calls: [@Sendable () async throws -> Result]
    ) async throws -> [Result] {
        let storage = app.storage
        let (held, writesHeld) = AsyncStream.makeStream(of: Void.self)
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            // Finished however the hold went, so that a failure here fails the test instead of hanging it.
            defer { writesHeld.finish() }
            try await storage.transaction { holder in
                if TestDatabase.postgresURL != nil {
                    try await holder.db.raw("LOCK TABLE \(unsafeRaw: tables.joined(separator: ", ")) IN SHARE MODE").run()
                }
                writesHeld.finish()
                for await _ in released {}
            }
        }
        for await _ in held {}
        let running = Task {
            try await withThrowingTaskGroup(of: (Int, Result).self) { group in
                for (index, call) in calls.enumerated() { group.addTask { (index, try await call()) } }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
        }
        // Time to read, not a deadline: a call that reads after another's write is refused anyway.
        try await Task.sleep(for: .milliseconds(500))
        release.finish()
        try await holder.value
        let results = try await running.value
        return calls.indices.map { results[$0]! }
    }
}
