import PostgresKit
import PostgresNIO
import SQLKit

/// A result row as the stores read it on PostgreSQL: a value of a type PostgresNIO decodes itself (text,
/// integers, booleans and timestamps, which are all the columns the stores have) is decoded straight from
/// its cell; any other type goes through PostgresKit's row, as before.
///
/// PostgresKit's row sends every value through its translation for Fluent's column types, which builds
/// the cell's name into a string for an error's coding path and tries each of Fluent's special cases by a
/// cast before it decodes: about 3 % of the server's CPU on PostgreSQL (docs/BENCHMARKS.md). Those
/// special cases are not made here: a `String` from a Fluent enum type, a `Decimal` from text, a `Double`
/// from `numeric` (what `avg` and `sum` return) would fail to decode; no store reads one.
struct PostgresStoreRow: SQLRow {
    private let row: PostgresRow
    private let cells: PostgresRandomAccessRow

    init(_ row: PostgresRow) {
        self.row = row
        cells = row.makeRandomAccess()
    }

    var allColumns: [String] { cells.map(\.columnName) }

    func contains(column: String) -> Bool { cells.contains(column) }

    func decodeNil(column: String) throws -> Bool {
        !cells.contains(column) || cells[column].bytes == nil
    }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let direct = D.self as? any PostgresDecodable.Type, cells.contains(column) else {
            return try row.sql().decode(column: column, as: D.self)
        }
        do {
            return try cells[column].decode(direct, context: .default) as! D
        } catch is PostgresDecodingError {
            // A `DecodingError`, as on SQLite, whose description names the column but not the cell's bytes
            // (which PostgresNIO's error carries, and which may be a token's hash).
            // SQLKit's decoder puts the column in the coding path.
            throw DecodingError.typeMismatch(D.self, .init(codingPath: [], debugDescription: "The column '\(column)' does not hold a \(D.self)."))
        }
    }
}
