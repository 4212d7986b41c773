@testable import CountersignServer
import Journeys
import Testing

@Suite("The event that tells a waiting browser how its approval closed")
struct ApprovalClosedTests {
    @Test("it carries the approval and its status, and no other message reads as one")
    func message() {
        let closed = ApprovalClosed(approvalID: "apr_x", status: .denied)
        #expect(ApprovalClosed(message: closed.message) == closed)
        // The wake-ups that only say "look again": a replaced stream's, a bare approval id, anything else.
        for other in ["", "apr_x", "closed apr_x", "closed apr_x later", "opened apr_x denied", "closed apr_x denied extra"] {
            #expect(ApprovalClosed(message: other) == nil, "\(other)")
        }
    }
}
