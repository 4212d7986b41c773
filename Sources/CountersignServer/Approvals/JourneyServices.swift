
/// The server's collaborators a journey run uses, assembled once at start.
struct JourneyServices: Sendable {
    let storage: Storage
    let tokenIssuer: TokenIssuer
    let evidenceSealer: EvidenceSealer
    let clock: any WallClock
    let approvals: ApprovalLifecycle
    let enrollmentCodes: EnrollmentCodes
    let recentRefusals: RecentRefusals
}
