import Foundation

/// An `application/x-www-form-urlencoded` body, as the OpenID endpoints take it: each parameter once
/// (RFC 6749 §3.2), percent-encoded UTF-8, no NUL.
enum FormBody {
    /// The most parameters a body may hold.
    static let mostParameters = 32

    /// The body's parameters by name; an empty value counts as absent (RFC 6749 §3.1).
    static func parameters(_ body: Data) throws(OAuthError) -> [String: String] {
        guard let text = String(data: body, encoding: .utf8) else { throw .invalidRequest("The body is not UTF-8.") }
        var parameters: [String: String] = [:]
        var seen = Set<String>()
        let pairs = text.split(separator: "&", omittingEmptySubsequences: true)
        guard pairs.count <= mostParameters else { throw .invalidRequest("The body holds more than \(mostParameters) parameters.") }
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decoded(parts[0]), let value = decoded(parts.count > 1 ? parts[1] : "") else {
                throw .invalidRequest("The body is not form-encoded.")
            }
            guard !name.contains("\u{0}"), !value.contains("\u{0}") else { throw .invalidRequest("No parameter may hold the NUL character.") }
            guard seen.insert(name).inserted else { throw .invalidRequest("The parameter '\(name.prefix(64))' is repeated.") }
            if !value.isEmpty { parameters[name] = value }
        }
        return parameters
    }

    private static func decoded(_ part: Substring) -> String? {
        part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
