import Logging
import NIOCore
import SQLKit

/// An `SQLDatabase` that times every statement it passes on (`countersign_database_query_duration_seconds`),
/// and hands its SQL to `observer` when there is one (`CountersignApp.Dependencies.statementObserver`).
struct TimedSQLDatabase: SQLDatabase {
    let base: any SQLDatabase
    let metrics: ServerMetrics
    let observer: (@Sendable (String) -> Void)?

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
        let started = ContinuousClock.now
        let metrics = metrics
        return base.execute(sql: query, onRow).always { _ in metrics.databaseQueried(duration: started.duration(to: .now)) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
        if let observer {
            var serializer = SQLSerializer(database: self)
            query.serialize(to: &serializer)
            observer(serializer.sql)
        }
        let started = ContinuousClock.now
        defer { metrics.databaseQueried(duration: started.duration(to: .now)) }
        try await base.execute(sql: query, onRow)
    }
}
