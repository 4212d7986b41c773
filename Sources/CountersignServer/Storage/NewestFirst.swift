import SQLKit

extension SQLSelectBuilder {
    /// Orders the rows newest first by `columns`, then by `id`, and with `after` (the id of the last row of
    /// the page before) continues after that row. Pages of such a listing neither repeat nor skip a row,
    /// whatever rows are added meanwhile; an `after` that names no row of `table` gives no rows.
    @discardableResult
    func newestFirst(by columns: [String], of table: String, after id: String?) -> Self {
        let keys = SQLList((columns + ["id"]).map(SQLName.init))
        if let id {
            self.where(SQLQueryString("(\(keys)) < (SELECT \(keys) FROM \(name: table) WHERE id = \(bind: id))"))
        }
        for column in columns + ["id"] { orderBy(column, .descending) }
        return self
    }
}
