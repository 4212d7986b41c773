@testable import CountersignServer
import Foundation

/// SQL a test writes to look inside the database or to break it on purpose, with its values written in
/// place as binds: `db.raw("SELECT * FROM approvals WHERE id = \(bind: id)")`. The stores' own
/// statements are fixed text; this is only for tests.
struct TestSQL: ExpressibleByStringInterpolation {
    var sql = ""
    var binds: [SQLValue] = []

    init(stringLiteral value: String) {
        sql = value
    }

    init(stringInterpolation: Interpolation) {
        sql = stringInterpolation.sql
        binds = stringInterpolation.binds
    }

    struct Interpolation: StringInterpolationProtocol {
        var sql = ""
        var binds: [SQLValue] = []

        init(literalCapacity: Int, interpolationCount: Int) {}

        mutating func appendLiteral(_ literal: String) {
            sql += literal
        }

        mutating func appendInterpolation(bind value: some SQLBindable) {
            binds.append(value.sqlValue)
            sql += "$\(binds.count)"
        }

        /// A table or column name, quoted.
        mutating func appendInterpolation(ident name: String) {
            sql += "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }

        mutating func appendInterpolation(unsafeRaw text: String) {
            sql += text
        }
    }
}

/// A test's statement, ready to run.
struct TestQuery {
    let db: any SQLExecutor
    let statement: BoundStatement

    func run() async throws { try await db.run(statement) }
    func all() async throws -> [DatabaseRow] { try await db.all(statement) }
    func first() async throws -> DatabaseRow? { try await db.first(statement) }

    /// Each row's columns as text, by name (every column the statement answers must hold text).
    func all(decoding _: [String: String].Type) async throws -> [[String: String]] {
        try await all().map { row in try Dictionary(uniqueKeysWithValues: row.columns.map { ($0, try row.decode($0, as: String.self)) }) }
    }

    func first(decoding type: [String: String].Type) async throws -> [String: String]? {
        try await all(decoding: type).first
    }

    /// Each row's columns as text or NULL, by name.
    func all(decoding _: [String: String?].Type) async throws -> [[String: String?]] {
        try await all().map { row in try Dictionary(uniqueKeysWithValues: row.columns.map { ($0, try row.decode($0, as: String?.self)) }) }
    }
}

extension SQLExecutor {
    func raw(_ sql: TestSQL) -> TestQuery {
        TestQuery(db: self, statement: BoundStatement(sql.sql, binds: sql.binds))
    }
}

extension DatabaseRow {
    /// What `decode(_:as:)` reads, as the tests name it.
    func decode<T: SQLColumnDecodable>(column: String, as type: T.Type = T.self) throws -> T {
        try decode(column, as: type)
    }
}
