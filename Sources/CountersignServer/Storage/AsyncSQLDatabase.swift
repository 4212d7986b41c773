import NIOCore
import SQLKit

/// An `SQLDatabase` whose statements run in async code (the SQLite and PostgreSQL engines'); the
/// future-based entry point SQLKit also requires bridges to it.
protocol AsyncSQLDatabase: SQLDatabase {}

extension AsyncSQLDatabase {
    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        promise.completeWithTask { try await self.execute(sql: query, onRow) }
        return promise.futureResult
    }
}
