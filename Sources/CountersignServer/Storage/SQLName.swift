import SQLKit

/// A table or column name in a statement, quoted as SQLKit's `SQLIdentifier` quotes it, without its cost.
///
/// `SQLIdentifier` escapes every name through the standard library's `replacing`, whose string search
/// took 2.5 % of the server's CPU in the `web_login` benchmark. A name without the dialect's quote
/// character (every name the stores write) is put between quotes as it is; any other is left to
/// `SQLIdentifier`.
struct SQLName: SQLExpression {
    let name: String

    init(_ name: String) {
        self.name = name
    }

    func serialize(to serializer: inout SQLSerializer) {
        guard let quote = (serializer.dialect.identifierQuote as? SQLRaw)?.sql, quote.utf8.count == 1,
              let quoteByte = quote.utf8.first, !name.utf8.contains(quoteByte)
        else {
            SQLIdentifier(name).serialize(to: &serializer)
            return
        }
        serializer.write(quote)
        serializer.write(name)
        serializer.write(quote)
    }
}

extension SQLQueryString {
    /// `name` as a table or column name: what `\(ident:)` writes (see `SQLName`).
    mutating func appendInterpolation(name: String) {
        appendInterpolation(SQLName(name))
    }
}

extension SQLDatabase {
    /// An insert of `record`'s columns into `table`: what `insert(into:).model(_:)` makes, with the names
    /// written by `SQLName`.
    func insert(_ record: some Encodable, into table: String) throws -> SQLInsertBuilder {
        let row = try SQLQueryEncoder().encode(record)
        return insert(into: SQLName(table)).columns(row.map { SQLName($0.0) }).values(row.map(\.1))
    }
}
