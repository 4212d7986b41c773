import CountersignCore
import Foundation

/// Where a web request came from: what the phone shows beside an approval, so that a person can tell
/// their own request from someone else's (DESIGN.md §6). It never goes into the push payload.
struct RequestOrigin: Sendable {
    /// The address the request came from, as the server saw it.
    let clientIP: String?
    let userAgent: String?
    /// The origin of the page that made the request, when a browser made it from another origin than the server's.
    let webOrigin: String?
    /// The SHA-256 of the browser credential the request presented, if any (how the credential is stored):
    /// looked up only when the request asks for an approval (`ApprovalLifecycle`). The secret itself goes
    /// no further than the HTTP layer.
    var browserCredentialHash: String? = nil

    /// `{client_ip, browser, os}`: what an approval keeps of its web request. The rest of
    /// `data.request_context` is the approval's own (`ApprovalRequestContext`).
    var summary: JSONValue {
        [
            "client_ip": clientIP.map { .string($0) } ?? .null,
            "browser": .string(UserAgentSummary.browser(userAgent)),
            "os": .string(UserAgentSummary.operatingSystem(userAgent)),
        ]
    }
}

/// `data.request_context` of an approval, as the phone shows it: `{application, client_ip, browser, os,
/// requested_at}`, from the request summary it stored, its application and the time it was created.
enum ApprovalRequestContext {
    static func of(_ addressed: AddressedApproval) throws -> JSONValue {
        var context = try addressed.approval.requestContext.map { try WireJSON.stored($0) }?.objectValue ?? [:]
        context["application"] = .string(addressed.applicationName)
        context["requested_at"] = .string(addressed.approval.createdAt.formatted(.iso8601))
        return .object(context)
    }
}

/// A browser's User-Agent reduced to what a person recognises: "Firefox 128", "Windows".
enum UserAgentSummary {
    /// Product tokens in the order that tells browsers apart (Edge and Opera also say Chrome and
    /// Safari; Chrome also says Safari).
    private static let browsers: [(token: String, name: String)] = [
        ("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"), ("CriOS/", "Chrome"), ("Chrome/", "Chrome"),
        ("Version/", "Safari"),
    ]
    private static let systems: [(token: String, name: String)] = [
        ("Windows", "Windows"), ("Android", "Android"), ("iPhone", "iOS"), ("iPad", "iOS"), ("CrOS", "ChromeOS"),
        ("Mac OS X", "macOS"), ("Linux", "Linux"),
    ]

    static func browser(_ userAgent: String?) -> String {
        guard let userAgent else { return "unknown" }
        for (token, name) in browsers {
            guard let range = userAgent.range(of: token) else { continue }
            let major = userAgent[range.upperBound...].prefix { $0.isNumber }
            return major.isEmpty ? name : "\(name) \(major)"
        }
        return "unknown"
    }

    static func operatingSystem(_ userAgent: String?) -> String {
        guard let userAgent else { return "unknown" }
        return systems.first { userAgent.contains($0.token) }?.name ?? "unknown"
    }
}
