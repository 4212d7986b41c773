import PostgresNIO
import SQLKit

/// A call's deferred statements sent to PostgreSQL as one statement: each becomes a data-modifying `WITH`
/// query, and the outer query reads what each changed. One statement is its own transaction, so the
/// call's writes commit together in one round trip instead of one for each and two more for `BEGIN`
/// and `COMMIT`.
///
/// A statement that must change a row and changed none makes `countersign_refuse_unless`
/// (the schema) raise, which rolls the whole statement back; the error's detail names it.
///
/// The statements run on one snapshot and none sees another's changes, so they must not depend on each
/// other's: calls whose statements name one row twice (`DeferredStatement.row`) commit in a transaction instead.
enum OneStatementCommit {
    /// The SQLSTATE `countersign_refuse_unless` raises.
    static let refusedState = "CS001"

    /// Runs `statements` as one; returns for each whether it changed a row, or throws `DeferredStatementRefused`.
    static func run(_ statements: [DeferredStatement], on sql: any SQLDatabase) async throws -> [Bool] {
        let queries = statements.enumerated().map { index, statement -> SQLQueryString in
            "\(unsafeRaw: "w\(index)") AS (\(statement.query))"
        }
        let answers = statements.enumerated().map { index, statement -> SQLQueryString in
            let changed: SQLQueryString = "EXISTS (SELECT 1 FROM \(unsafeRaw: "w\(index)"))"
            guard statement.answersChangedRows else { return "TRUE AS \(unsafeRaw: "c\(index)")" }
            guard statement.refusal != nil else { return "\(changed) AS \(unsafeRaw: "c\(index)")" }
            return "countersign_refuse_unless(\(changed), \(literal: index)) AS \(unsafeRaw: "c\(index)")"
        }
        do {
            guard let row = try await sql.raw("WITH \(queries.joined(separator: ", ")) SELECT \(answers.joined(separator: ", "))").first()
            else { preconditionFailure("a SELECT without FROM answers one row") }
            return try statements.indices.map { try row.decode(column: "c\($0)", as: Bool.self) }
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == refusedState {
            guard let index = error.serverInfo?[.detail].flatMap(Int.init), statements.indices.contains(index),
                let refusal = statements[index].refusal
            else { throw error }
            throw DeferredStatementRefused(refusal: refusal)
        }
    }
}
