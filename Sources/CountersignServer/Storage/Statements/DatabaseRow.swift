/// One row a statement answered: its values by column name.
struct DatabaseRow: Sendable {
    /// The statement's column names, shared by its rows.
    let columns: [String]
    let values: [SQLValue]

    /// The value of `column`; fails when the statement answered no such column.
    func value(_ column: String) throws -> SQLValue {
        guard let index = columns.firstIndex(of: column) else { throw DatabaseRowError.noColumn(column) }
        return values[index]
    }

    func isNull(_ column: String) throws -> Bool {
        try value(column) == .null
    }

    /// Column `column` as a `T`; fails, naming the column but not its value (which may be a token's
    /// hash), when it holds something else.
    func decode<T: SQLColumnDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        guard let decoded = T(sqlValue: try value(column)) else { throw DatabaseRowError.typeMismatch(column: column, type: "\(T.self)") }
        return decoded
    }

    subscript<T: SQLColumnDecodable>(_ column: String) -> T {
        get throws { try decode(column) }
    }
}

/// A row that does not hold what a store reads from it: a programming error, or a database written by a
/// schema other than this version's.
enum DatabaseRowError: Error, CustomStringConvertible {
    case noColumn(String)
    case typeMismatch(column: String, type: String)

    var description: String {
        switch self {
        case .noColumn(let column): "a stored value could not be decoded: the statement answered no column '\(column)'"
        case .typeMismatch(let column, let type): "a stored value could not be decoded: the column '\(column)' does not hold a \(type)"
        }
    }
}

/// A record read from a row by its column names.
protocol RowDecodable {
    init(row: DatabaseRow) throws
}
