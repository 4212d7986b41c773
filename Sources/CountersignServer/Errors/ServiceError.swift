import CountersignCore
import Journeys

/// A request the server refuses, as the services, the journey effects and the stores say it: the kind of
/// refusal, the wire code (one of `ErrorCode`) and a message for the client. It knows nothing of HTTP:
/// `ErrorMiddleware` alone turns the kind into a status.
struct ServiceError: Error {
    enum Kind: Sendable {
        /// The request is malformed or breaks a rule of its step.
        case invalidRequest
        /// Who is asking could not be established: an unknown client, a wrong token or signature.
        case unauthenticated
        /// Known, but not allowed to do this.
        case forbidden
        case notFound
        /// The request collides with the current state (a duplicate, or a race it may retry).
        case conflict
        /// What it acts on has ended: expired, finished or closed.
        case gone
        /// Too soon; it may be tried again after this many seconds.
        case tooSoon(retryAfter: Int)
        /// The body is not in the format the API speaks.
        case unsupportedMediaType
        /// The server could not do it, for a reason of its own setup that it names (an operator's call only).
        case failed
    }

    let kind: Kind
    let code: String
    let message: String

    init(_ kind: Kind, _ code: String, _ message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    static func notValid(_ message: String) -> ServiceError {
        ServiceError(.invalidRequest, ErrorCode.clientResponseNotValid, message)
    }

    static func invalidToken(_ message: String = "The interaction token is missing, wrong or superseded.") -> ServiceError {
        ServiceError(.unauthenticated, ErrorCode.invalidToken, message)
    }

    static func notFound(_ message: String) -> ServiceError {
        ServiceError(.notFound, ErrorCode.notFound, message)
    }

    static func alreadyExists(_ message: String) -> ServiceError {
        ServiceError(.conflict, ErrorCode.alreadyExists, message)
    }

    /// The phone acts with a device that has been revoked.
    static let deviceRevoked = ServiceError(.forbidden, ErrorCode.deviceRevoked, "The device has been revoked.")

    /// The phone acts on an approval that is no longer pending: `expired` or `approval_closed`.
    static func approvalNotPending(_ status: ApprovalStatus) -> ServiceError {
        status == .expired
            ? ServiceError(.gone, ErrorCode.expired, "The approval has expired.")
            : ServiceError(.gone, ErrorCode.approvalClosed, "The approval was already \(status.rawValue).")
    }
}
