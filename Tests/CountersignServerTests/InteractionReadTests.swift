@testable import CountersignServer
import CountersignCore
import Journeys
import Testing

/// Every call of a run reads the run and the approval (or decoy) it answers or waits on in one statement;
/// a decoy must be read by that same statement, or a browser could time its calls apart.
@Suite("An interaction is read with its approval or decoy")
struct InteractionReadTests {
    @Test("a browser waiting on a phone and one waiting on a decoy are each read with it; a phone's run with the approval it answers")
    func readWithItsApproval() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let interactions = InteractionStore(sql: try #require(server.app.countersignSQL))

            let (adaID, adaToken) = try await server.waitingWebLogin(email: "ada@example.com")
            let (nobodyID, _) = try await server.waitingWebLogin(email: "nobody@example.com")
            let ada = try #require(try await interactions.findWithApproval(adaID))
            guard case .approval(let approval, let user, let pushStatus) = ada.approval else {
                Issue.record("Ada's browser is read without its approval: \(String(describing: ada.approval))")
                return
            }
            #expect(approval.webInteractionID == adaID && approval.status == ApprovalStatus.pending.rawValue)
            #expect(user.externalUserID == "ada@example.com" && pushStatus == PushStatus.sent.rawValue)
            let nobody = try #require(try await interactions.findWithApproval(nobodyID))
            guard case .decoy(let decoy) = nobody.approval else {
                Issue.record("the decoy's browser is read without its decoy: \(String(describing: nobody.approval))")
                return
            }
            #expect(decoy.webInteractionID == nobodyID && DecoyApprovalRecord.isDecoy(decoy.id))

            // The phone's run: its first answer's call reads the approval with it.
            let opened = try await phone.startApproval()
            let mobile = try #require(try await interactions.findWithApproval(opened.interactionID))
            #expect(mobile.approval?.record?.id == approval.id)
            // Approved (through a second run of the phone's), the browser resumes, and its run then waits on nothing.
            try await phone.approve()
            server.clock.advance(by: 3)
            let resumed = try await server.send(.POST, "/v1/interactions/\(adaID)/submit", json: ["option": "client_input", "data": [:]], bearer: adaToken)
            #expect(resumed.body["journey_step_id"] == .string(JourneyStepID.success))
            #expect(try await interactions.findWithApproval(adaID)?.approval == nil)
        }
    }
}
