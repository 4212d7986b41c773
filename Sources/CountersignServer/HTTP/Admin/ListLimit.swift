import Vapor

extension Request {
    /// The `limit` query parameter of an admin listing: 100 when absent, otherwise a whole number from 1
    /// to 1000 (anything else is refused rather than read as "no limit").
    func listLimit() throws -> Int {
        guard let raw = query[String.self, at: "limit"] else { return 100 }
        guard let limit = Int(raw), (1...1000).contains(limit) else {
            throw ServiceError.notValid("'limit' must be a whole number from 1 to 1000.")
        }
        return limit
    }
}
