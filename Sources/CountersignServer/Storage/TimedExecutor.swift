/// An executor that times every statement it passes on (`countersign_database_query_duration_seconds`),
/// and hands its SQL to `observer` when there is one (`CountersignApp.Dependencies.statementObserver`).
struct TimedExecutor: SQLExecutor {
    let base: any SQLExecutor
    let metrics: ServerMetrics
    let observer: (@Sendable (String) -> Void)?

    var database: DatabaseKind { base.database }

    func execute(_ statement: BoundStatement, _ onRow: @escaping @Sendable (DatabaseRow) -> Void) async throws {
        observer?(statement.sql)
        let started = ContinuousClock.now
        defer { metrics.databaseQueried(duration: started.duration(to: .now)) }
        try await base.execute(statement, onRow)
    }
}
