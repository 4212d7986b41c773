import SQLKit

extension CodingKey where Self: CaseIterable {
    /// Every column a record's coding keys name, read from table alias `alias` and each renamed `prefix` +
    /// its name: for a query that reads the record beside columns of the same names (SQLKit's
    /// `decode(model:prefix:)` reads it back).
    static func columns(of alias: String, prefixedWith prefix: String) -> String {
        allCases.map { "\(alias).\($0.stringValue) AS \(prefix)\($0.stringValue)" }.joined(separator: ", ")
    }
}

extension SQLRow {
    /// The record a `LEFT JOIN` read beside others, its columns named `prefix` + its own; nil when the join
    /// found none (its `id` is NULL).
    func decode<Record: Decodable>(joined: Record.Type, prefix: String = "") throws -> Record? {
        try decodeNil(column: prefix + "id") ? nil : try decode(model: joined, prefix: prefix)
    }
}
