@testable import CountersignServer
import Journeys
import Testing

/// The decoded states an instance keeps stand in for the stored state only while the row holds exactly
/// what that instance committed; they are bounded, and an ended interaction's is dropped.
@Suite("Decoded interaction states kept by an instance")
struct OpenedStatesTests {
    @Test("a kept state is used only for the sealed text it was committed as: another save of the same interaction is opened from the row")
    func onlyForTheSameSealedText() {
        let states = OpenedStates()
        states.remember(state("web_login"), sealed: "sealed-1", of: "int_a")
        #expect(states.state(of: "int_a", sealed: "sealed-1")?.journeyID == "web_login")
        #expect(states.state(of: "int_a", sealed: "sealed-2") == nil)
        #expect(states.state(of: "int_b", sealed: "sealed-1") == nil)
        states.remember(state("web_login_otp"), sealed: "sealed-2", of: "int_a")
        #expect(states.state(of: "int_a", sealed: "sealed-1") == nil)
        #expect(states.state(of: "int_a", sealed: "sealed-2")?.journeyID == "web_login_otp")
    }

    @Test("an interaction that ended is forgotten")
    func endedIsForgotten() {
        let states = OpenedStates()
        states.remember(state("web_login"), sealed: "sealed-1", of: "int_a")
        states.forget("int_a")
        #expect(states.state(of: "int_a", sealed: "sealed-1") == nil)
    }

    @Test("at most the capacity is kept: past it the oldest states are dropped, the newest stay")
    func bounded() {
        let states = OpenedStates(capacity: 4)
        for index in 0..<7 { states.remember(state("web_login"), sealed: "sealed-\(index)", of: "int_\(index)") }
        let kept = (0..<7).filter { states.state(of: "int_\($0)", sealed: "sealed-\($0)") != nil }
        #expect(kept.count <= 4)
        #expect(kept.contains(6) && kept.contains(5))
        #expect(!kept.contains(0) && !kept.contains(1))
    }

    private func state(_ journeyID: String) -> InteractionState {
        InteractionState(journeyID: journeyID, clientID: "demo-web")
    }
}
