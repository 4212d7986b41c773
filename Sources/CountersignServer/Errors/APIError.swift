import CountersignCore
import Journeys
import Vapor

/// A refusal the client is meant to see: an HTTP status and a wire `error` object.
struct APIError: Error {
    let status: HTTPResponseStatus
    let error: WireError
    var headers: HTTPHeaders = [:]

    init(_ status: HTTPResponseStatus, _ code: String, _ message: String, headers: HTTPHeaders = [:]) {
        self.status = status
        self.error = WireError(code: code, message: message)
        self.headers = headers
    }

    static func notValid(_ message: String) -> APIError {
        APIError(.badRequest, ErrorCode.clientResponseNotValid, message)
    }

    static func invalidToken(_ message: String = "The interaction token is missing, wrong or superseded.") -> APIError {
        APIError(.unauthorized, ErrorCode.invalidToken, message)
    }

    static func notFound(_ message: String) -> APIError {
        APIError(.notFound, ErrorCode.notFound, message)
    }

    /// The phone acts on an approval that is no longer pending: 410 `expired` or `approval_closed`.
    static func approvalNotPending(_ status: ApprovalStatus) -> APIError {
        status == .expired
            ? APIError(.gone, ErrorCode.expired, "The approval has expired.")
            : APIError(.gone, "approval_closed", "The approval was already \(status.rawValue).")
    }
}

/// The body of a refusal that is not an interaction response.
struct ErrorBody: Content {
    let error: WireError
}
