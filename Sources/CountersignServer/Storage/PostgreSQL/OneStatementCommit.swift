import PostgresNIO
import Synchronization

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
    static func run(_ statements: [DeferredStatement], on db: any SQLExecutor) async throws -> [Bool] {
        let statement = BoundStatement(sql(joining: statements), binds: statements.flatMap(\.query.binds))
        do {
            guard let row = try await db.first(statement) else { preconditionFailure("a SELECT without FROM answers one row") }
            return try statements.indices.map { try row.decode("c\($0)", as: Bool.self) }
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == refusedState {
            guard let index = error.serverInfo?[.detail].flatMap(Int.init), statements.indices.contains(index),
                let refusal = statements[index].refusal
            else { throw error }
            throw DeferredStatementRefused(refusal: refusal)
        }
    }

    /// The joined statement's SQL, made once for each sequence of statements a call commits (there are a
    /// few dozen: one for each path through the services), so that it too is prepared once per connection.
    private static func sql(joining statements: [DeferredStatement]) -> String {
        let key = statements.map { "\($0.answersChangedRows ? ($0.refusal == nil ? "a" : "r") : "w")\($0.query.sql)" }.joined(separator: "\u{0}")
        if let sql = joined.withLock({ $0[key] }) { return sql }
        let sql = join(statements)
        joined.withLock { cache in
            if cache.count < PreparedStatements.limit { cache[key] = sql }
        }
        return sql
    }

    private static let joined = Mutex<[String: String]>([:])

    private static func join(_ statements: [DeferredStatement]) -> String {
        var offset = 0
        let queries = statements.enumerated().map { index, statement in
            defer { offset += statement.query.binds.count }
            return "w\(index) AS (\(renumbered(statement.query.sql, by: offset)))"
        }
        let answers = statements.enumerated().map { index, statement in
            let changed = "EXISTS (SELECT 1 FROM w\(index))"
            guard statement.answersChangedRows else { return "TRUE AS c\(index)" }
            guard statement.refusal != nil else { return "\(changed) AS c\(index)" }
            return "countersign_refuse_unless(\(changed), \(index)) AS c\(index)"
        }
        return "WITH \(queries.joined(separator: ", ")) SELECT \(answers.joined(separator: ", "))"
    }

    /// `sql` with each parameter `$n` numbered `$(n + offset)` (statements' SQL holds `$` nowhere else).
    private static func renumbered(_ sql: String, by offset: Int) -> String {
        guard offset > 0 else { return sql }
        var result = ""
        var number: Int?
        for character in sql {
            if let digit = character.wholeNumberValue, let current = number {
                number = current * 10 + digit
                continue
            }
            if let current = number {
                result += "$\(current + offset)"
                number = nil
            }
            if character == "$" { number = 0 } else { result.append(character) }
        }
        if let current = number { result += "$\(current + offset)" }
        return result
    }
}
