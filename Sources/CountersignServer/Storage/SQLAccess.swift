import Fluent
import FluentSQL

extension Database {
    /// This database as SQL, for statements written by hand (hot paths, conditional updates).
    /// Both supported drivers are SQL databases.
    var sql: any SQLDatabase {
        get throws {
            guard let sql = self as? any SQLDatabase else { throw DatabaseNotSQL() }
            return sql
        }
    }
}

/// The configured database does not speak SQL.
struct DatabaseNotSQL: Error, CustomStringConvertible {
    var description: String { "Countersign needs an SQL database (SQLite or PostgreSQL)." }
}
