import Hummingbird

/// One page of an admin listing, newest first: `limit` items, after the item whose id is `after` (the
/// last of the page before; absent or empty for the first page).
struct ListPage {
    let after: String?
    let limit: Int
}

extension Request {
    /// The page an admin listing asks for. `limit` is 100 when absent, otherwise a whole number from 1 to
    /// 1000 (anything else is refused rather than read as "no limit").
    func listPage() throws -> ListPage {
        ListPage(after: query("after").flatMap { $0.isEmpty ? nil : $0 }, limit: try listLimit())
    }

    private func listLimit() throws -> Int {
        guard let raw = query("limit") else { return 100 }
        guard let limit = Int(raw), (1...1000).contains(limit) else {
            throw ServiceError.notValid("'limit' must be a whole number from 1 to 1000.")
        }
        return limit
    }
}
