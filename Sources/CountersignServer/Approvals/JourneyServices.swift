import Fluent

/// The server's collaborators a journey run uses, assembled once at start.
struct JourneyServices: Sendable {
    let database: any Database
    let tokenIssuer: TokenIssuer
    let clock: any WallClock
    let approvals: ApprovalLifecycle
}
